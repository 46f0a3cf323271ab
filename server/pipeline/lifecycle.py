"""A session's lifecycle in storage: created RUNNING, ended SUCCESS (by the stage sequence) or
FAILED with its reason — and never left RUNNING, whatever is cancelled or which write fails: a
cancellation landing on the INSERT's commit still records FAILED, and a session interrupted by a
database outage is recorded FAILED in the background once the database answers again."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from evigate.rules.enums import SessionStatus
from evigate.rules.errors import EvigateError, StatusCode
from evigate.server.deadline import Deadline
from evigate.server.pipeline.events import ChatResult
from evigate.server.pipeline.progress import Progress
from evigate.storage.errors import DatabaseRefused, DatabaseUnavailable
from evigate.storage.records import SessionRecord, TraceRecord
from evigate.storage.repository import Repository

log = logging.getLogger("evigate.pipeline")
RECOVERY_FIRST_DELAY_S = 0.5
RECOVERY_MAX_DELAY_S = 10.0
RECOVERY_WINDOW_S = 600.0


class SessionRunning(EvigateError):  # noqa: N818 - the name the server already maps
    """A session with this id is still running (Chat with a client-chosen id repeated too early)."""

    status_code = StatusCode.ALREADY_EXISTS
    error_reason = "SESSION_RUNNING"

    def _session_id(self) -> str:
        return str(self.args[0]) if self.args else ""

    def status_message(self) -> str:
        return f"session {self._session_id()!r} is still running; retry later or read it with GetTrace"

    def error_info(self) -> tuple[str, dict[str, str]]:
        return self.error_reason, {"session_id": self._session_id()}


class SessionLifecycle:
    def __init__(
        self, repo: Repository, owner: str, on_failed: Callable[[str, str], None] | None = None
    ) -> None:
        self._repo = repo
        self._owner = owner  # this process's identity, for orphaned-session recovery
        self._on_failed = on_failed  # (session_id, kind): the sessions metric
        self._recoveries: set[asyncio.Task[None]] = set()

    def aclose(self) -> None:
        """Stops the background recoveries (shutdown)."""
        for task in list(self._recoveries):
            task.cancel()

    async def recovered(self) -> None:
        """Waits until every background recovery has ended (each ends once it wrote or gave up)."""
        while self._recoveries:
            await asyncio.gather(*list(self._recoveries))

    async def existing(self, session_id: str | None) -> ChatResult | None:
        if not session_id:
            return None
        trace = await self._repo.get_trace(session_id)
        if trace is None:
            return None
        if trace.session.status == SessionStatus.RUNNING:
            raise SessionRunning(session_id)
        return result_from_trace(trace)

    async def create(self, session_id: str, query: str, language: str, deadline: Deadline) -> None:
        """Creates the RUNNING row. A cancellation can arrive after the INSERT committed but before
        its reply: the row is then still written and recorded FAILED, never left RUNNING."""
        create = asyncio.ensure_future(self._repo.create_session(session_id, query, language, self._owner))
        try:
            await asyncio.shield(create)
        except asyncio.CancelledError:
            kind = "deadline_exceeded" if deadline.expired() else "cancelled"
            await asyncio.shield(self._fail_if_created(create, session_id, kind))
            raise

    async def _fail_if_created(self, create: asyncio.Future[Any], session_id: str, kind: str) -> None:
        reason = f"{kind.replace('_', ' ')} before the pipeline started"
        try:
            await create
        except DatabaseRefused:  # never sent: not created
            return
        except DatabaseUnavailable:  # the INSERT may have committed all the same
            self.report_failed(session_id, kind)
            self.fail_once_reachable(session_id, reason, Progress())
            return
        except Exception:  # not created (e.g. the id exists: not this call's row)
            return
        with contextlib.suppress(DatabaseUnavailable):  # recorded once the database is back
            await self.fail_or_later(session_id, reason, Progress(), kind)

    def report_failed(self, session_id: str, kind: str) -> None:
        if self._on_failed is not None:
            self._on_failed(session_id, kind)

    async def fail_undelivered(self, session_id: str) -> None:
        """A SUCCESS whose answer cannot reach the caller before its deadline (the front end's call):
        recorded FAILED, since the caller sees DEADLINE_EXCEEDED."""
        reason = "deadline exceeded before the answer could be sent"
        await asyncio.shield(self._repo.finish_failed(session_id, reason, {}, undelivered=True))
        self.report_failed(session_id, "deadline_exceeded")

    def fail_once_reachable(self, session_id: str, reason: str, progress: Progress) -> None:
        """The database went away mid-session, so the row would stay RUNNING (start-up recovery only
        runs after a crash): record it FAILED in the background once the database is back."""

        async def retry() -> None:
            delay = RECOVERY_FIRST_DELAY_S
            deadline = time.monotonic() + RECOVERY_WINDOW_S
            while time.monotonic() < deadline:
                await asyncio.sleep(delay)
                try:
                    session = await self._repo.get_session(session_id)
                    # Not RUNNING: the row was never written, or the write that failed did commit.
                    if session is not None and session.status == SessionStatus.RUNNING:
                        await self.fail(session_id, reason, progress)
                    return
                except Exception as error:  # unreachable still, or a connection the outage broke
                    log.warning(
                        "recording a session FAILED: retrying",
                        extra={"session_id": session_id, "error": f"{type(error).__name__}: {error}"},
                    )
                    delay = min(delay * 2, RECOVERY_MAX_DELAY_S)
            log.warning("session left RUNNING: database unreachable", extra={"session_id": session_id})

        task = asyncio.create_task(retry(), name=f"fail-{session_id}")
        self._recoveries.add(task)
        task.add_done_callback(self._recoveries.discard)

    async def fail_or_later(
        self, session_id: str, reason: str, progress: Progress, kind: str, *, undelivered: bool = False
    ) -> ChatResult:
        """`_fail`, and when the database is unreachable, the same in the background once it is back
        (DatabaseUnavailable is still raised). Counted as FAILED (`kind`) either way."""
        self.report_failed(session_id, kind)
        try:
            return await self.fail(session_id, reason, progress, undelivered=undelivered)
        except DatabaseUnavailable:
            self.fail_once_reachable(session_id, reason, progress)
            raise

    async def fail(
        self, session_id: str, reason: str, progress: Progress, *, undelivered: bool = False
    ) -> ChatResult:
        """FAILED with the reason; the plan, rounds and invocations are already stored, the extras
        keep the latencies, prompt versions and the rounds' evaluations. `undelivered`: a SUCCESS
        that raced the deadline or a cancellation is failed too."""
        await self._repo.finish_failed(
            session_id, reason, {**progress.extras(), "failed_stage": progress.stage}, undelivered=undelivered
        )
        return ChatResult(
            session_id, SessionStatus.FAILED, "", None, None, None, None, reason, tuple(progress.latencies)
        )


def result_from_trace(trace: TraceRecord) -> ChatResult:
    """The stored result of a finished session (idempotent Chat)."""
    session: SessionRecord = trace.session
    last = trace.rounds[-1] if trace.rounds else None
    return ChatResult(
        session_id=session.session_id,
        status=session.status,
        answer=session.answer or "",
        composer_output=session.composer_output,
        verdict=last.verdict if last else None,
        gatekeeper_result=last.gatekeeper_result if last else None,
        evidence=last.executor_output if last else None,
        failure_reason=session.failure_reason or "",
    )
