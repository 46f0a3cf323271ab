"""GetTrace and ListSessions: read a session back, stage by stage, or page through sessions.

A front end passes the presenter that turns a stored trace into its own reply; finished sessions'
replies are cached (server.usecases.trace_cache) so a repeated read costs no query and no
conversion."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from evigate.rules.enums import SessionStatus
from evigate.server.usecases.ports import SessionStore
from evigate.server.usecases.trace_cache import TraceCache
from evigate.storage.errors import SessionNotFound
from evigate.storage.records import SessionRecord, TraceRecord

Reply = TypeVar("Reply")


class TraceUseCase:
    def __init__(self, store: SessionStore) -> None:
        self._store = store

    async def get(
        self, session_id: str, present: Callable[[TraceRecord], Reply], cache: TraceCache[Reply] | None = None
    ) -> Reply:
        """The presented trace; SessionNotFound for an unknown id."""

        async def load() -> tuple[Reply, bool]:
            record = await self._store.get_trace(session_id)
            if record is None:
                raise SessionNotFound(session_id)
            if record.case_id is not None:  # the case's structure, for the trace's reader
                record = replace(record, case=await self._store.get_case(record.case_id))
            return present(record), record.session.status != SessionStatus.RUNNING

        if cache is None:
            return (await load())[0]
        return await cache.get_or_load(session_id, load)

    async def list_sessions(
        self, feedback: str | None, status: str | None, page_size: int, page_token: str | None
    ) -> tuple[list[SessionRecord], str | None]:
        """Newest first, one page, and the token of the next page (None at the end)."""
        return await self._store.list_sessions(feedback, status, page_size, page_token)
