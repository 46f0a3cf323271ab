"""Check: an outside Executor's output judged by the Gatekeeper against a session's recorded calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evigate.rules import gatekeeper
from evigate.rules.rule_catalog import RuleCatalog
from evigate.server.pipeline import material
from evigate.server.usecases.ports import SessionStore
from evigate.storage.errors import SessionNotFound


class CheckUseCase:
    def __init__(self, store: SessionStore, catalog: RuleCatalog) -> None:
        self._store = store
        self._catalog = catalog

    async def check(self, session_id: str, evidence: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The gatekeeper result dict; SessionNotFound for an unknown session. `evidence` builds the
        evidence dict: called after the reads, so that a converted request never waits on them
        (a burst of large Checks would hold all of them at once)."""
        if await self._store.get_session(session_id) is None:
            raise SessionNotFound(session_id)
        invocations = await self._store.list_invocations(session_id)
        return gatekeeper.check(evidence(), material.invocation_facts(invocations), self._catalog).to_seed()
