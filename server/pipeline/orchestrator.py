"""Runs one session through every stage, persisting as it goes.

run() and stream() share one code path: the session runs as a task that emits StageEvents; stream()
forwards them as they happen, run() only waits for the result. Cancelling the caller cancels the
task, which stops outstanding tool and LLM calls and records the session as FAILED. The stages are
`server.pipeline.stages`, the session's lifecycle in storage `server.pipeline.lifecycle`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from evigate.rules.rule_catalog import RuleCatalog
from evigate.server.agents.base import AgentBackend, Skill
from evigate.server.deadline import Deadline, DeadlineExceeded
from evigate.server.pipeline.events import ChatResult, StageEvent
from evigate.server.pipeline.lifecycle import SessionLifecycle, SessionRunning
from evigate.server.pipeline.progress import Progress
from evigate.server.pipeline.stages import StageSequence
from evigate.server.tasks import cancel_and_wait
from evigate.server.tools import ToolBackend
from evigate.storage.errors import DatabaseRefused, DatabaseUnavailable, SessionAlreadyExists
from evigate.storage.repository import Repository

Emit = Callable[[StageEvent], None]
log = logging.getLogger("evigate.pipeline")


@dataclass(frozen=True)
class PipelineSettings:
    max_rounds: int = 2  # the first round plus one retry after REJECT
    owner: str = "evigate"  # this process's identity, for orphaned-session recovery
    on_success: Callable[[str], None] | None = None  # after the SUCCESS commit (wakes the evaluation worker)
    # (session_id, kind) once a session is decided FAILED, kind being deadline_exceeded | cancelled |
    # database_unavailable | error (the sessions metric; a SUCCESS is counted when it is delivered).
    on_failed: Callable[[str, str], None] | None = None


class Pipeline:
    def __init__(  # noqa: PLR0917 - the composition root passes them positionally
        self,
        repo: Repository,
        tools: ToolBackend,
        agents: AgentBackend,
        skills: Sequence[Skill],
        catalog: RuleCatalog,
        settings: PipelineSettings | None = None,
    ) -> None:
        self._settings = settings or PipelineSettings()
        self._agents = agents
        self._lifecycle = SessionLifecycle(repo, self._settings.owner, self._settings.on_failed)
        self._stages = StageSequence(
            repo, tools, agents, skills, catalog, self._settings.max_rounds, self._settings.on_success
        )

    async def aclose(self) -> None:
        """Releases what the agent backend holds (the llm backend's HTTP client); call at shutdown."""
        self._lifecycle.aclose()
        await self._agents.aclose()

    async def fail_undelivered(self, session_id: str) -> None:
        """A SUCCESS whose answer cannot reach the caller before its deadline (the front end's call):
        recorded FAILED, since the caller sees DEADLINE_EXCEEDED."""
        await self._lifecycle.fail_undelivered(session_id)

    async def recovered(self) -> None:
        """Waits for the background recoveries of sessions an outage interrupted (tests, shutdown)."""
        await self._lifecycle.recovered()

    async def run(self, query: str, session_id: str | None, language: str, deadline: Deadline) -> ChatResult:
        """Runs a session to its end; a finished session with this id returns its stored result."""
        deadline.check()
        async with _within(deadline):
            existing = await self._lifecycle.existing(session_id)
        if existing is not None:
            return existing
        return await self._run(query, session_id or _new_id(), language, deadline, emit=None)

    async def stream(
        self, query: str, session_id: str | None, language: str, deadline: Deadline
    ) -> AsyncIterator[StageEvent]:
        """Yields each stage event as it happens, ending with the `result` event."""
        deadline.check()
        async with _within(deadline):
            existing = await self._lifecycle.existing(session_id)
        if existing is not None:
            yield StageEvent(existing.session_id, "result", 0, existing)
            return
        queue: asyncio.Queue[StageEvent | BaseException | None] = asyncio.Queue()
        sid = session_id or _new_id()

        async def runner() -> None:
            try:
                await self._run(query, sid, language, deadline, emit=queue.put_nowait)
            except BaseException as error:
                queue.put_nowait(error)
                if isinstance(error, asyncio.CancelledError):
                    raise
            else:
                queue.put_nowait(None)

        task = asyncio.create_task(runner())
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:  # the runner records how the session ended: wait for it (its writes are bounded)
            await cancel_and_wait(task, timeout_s=None)

    async def _run(
        self, query: str, session_id: str, language: str, deadline: Deadline, emit: Emit | None
    ) -> ChatResult:
        """The deadline rule: the server checks its own deadline (the caller's, shortened) before
        the first write, and a timeout on it covers the INSERT and every stage and write after;
        past it the session ends FAILED "deadline exceeded during <stage>" (or "before the pipeline
        started"), even when a SUCCESS commit raced it (the caller never gets that answer).
        Nothing is written when it passed before the session was created."""
        deadline.check()
        try:
            async with _within(deadline):
                await self._lifecycle.create(session_id, query, language, deadline)
        except DatabaseRefused:
            # Refused by the open breaker before the INSERT was sent: no session exists, none is
            # counted (the call is, in evigate_rpc_total as UNAVAILABLE).
            raise
        except DatabaseUnavailable:
            # The connection may have dropped after the INSERT committed: the row can exist, RUNNING.
            self._lifecycle.report_failed(session_id, "database_unavailable")
            self._lifecycle.fail_once_reachable(
                session_id, "the database became unreachable while the session was created", Progress()
            )
            raise
        except SessionAlreadyExists:
            # Another caller created it between our read and our insert.
            existing = await self._lifecycle.existing(session_id)
            if existing is None:
                raise
            if emit is not None:
                emit(StageEvent(session_id, "result", 0, existing))
            return existing
        progress = Progress()
        try:
            deadline.check()  # the INSERT may have used up the time left
            async with asyncio.timeout(deadline.remaining()):
                result = await self._stages.run(
                    query=query,
                    session_id=session_id,
                    language=language,
                    deadline=deadline,
                    progress=progress,
                    emit=emit,
                )
        except (DeadlineExceeded, TimeoutError) as error:
            expired = isinstance(error, DeadlineExceeded) or deadline.expired()
            if expired:
                reason, kind = f"deadline exceeded {_when(progress)}", "deadline_exceeded"
            else:  # a timeout of its own (e.g. a database connect), not the caller's deadline
                reason, kind = f"{progress.where()} failed: {type(error).__name__}: {error}", "error"
            # shielded: gRPC may cancel the call at the same moment its deadline passes
            result = await asyncio.shield(
                self._lifecycle.fail_or_later(session_id, reason, progress, kind, undelivered=expired)
            )
        except asyncio.CancelledError:
            # gRPC also cancels the call when the caller's deadline passes (ours passed first then):
            # the reason is the one the caller saw. Shielded: written although this task is cancelled.
            kind = "deadline_exceeded" if deadline.expired() else "cancelled"
            reason = f"{kind.replace('_', ' ')} {_when(progress)}"
            with contextlib.suppress(DatabaseUnavailable):  # recorded once the database is back
                await asyncio.shield(
                    self._lifecycle.fail_or_later(session_id, reason, progress, kind, undelivered=True)
                )
            raise
        except DatabaseUnavailable:
            self._lifecycle.report_failed(session_id, "database_unavailable")
            self._lifecycle.fail_once_reachable(
                session_id, f"the database became unreachable during {progress.where()}", progress
            )
            raise
        except Exception as error:
            log.exception("session failed", extra={"session_id": session_id, "stage": progress.where()})
            reason = f"{progress.where()} failed: {type(error).__name__}: {error}"
            result = await self._lifecycle.fail_or_later(session_id, reason, progress, "error")
        if emit is not None:
            emit(StageEvent(session_id, "result", 0, result))
        return result


@contextlib.asynccontextmanager
async def _within(deadline: Deadline) -> AsyncIterator[None]:
    """The server's deadline around a database call made before the stages start (the reads of a
    client-chosen id, the INSERT): past it, DeadlineExceeded from the server itself."""
    try:
        async with asyncio.timeout(deadline.remaining()):
            yield
    except TimeoutError:
        if not deadline.expired():
            raise
        raise DeadlineExceeded("deadline exceeded before the pipeline started") from None


def _when(progress: Progress) -> str:
    """Where a deadline or cancellation found the session, as its FAILED reason says it; before the
    first stage (the INSERT answered too late) the same words as a cancelled INSERT's."""
    if progress.stage == Progress().stage:
        return "before the pipeline started"
    return f"during {progress.where()}"


def _new_id() -> str:
    return uuid.uuid4().hex


__all__ = ["Pipeline", "PipelineSettings", "SessionRunning"]
