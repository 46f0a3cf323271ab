"""Runs one session through every stage, persisting as it goes.

run() and stream() share one code path: the session runs as a task that emits StageEvents; stream()
forwards them as they happen, run() only waits for the result. Cancelling the caller cancels the
task, which stops outstanding tool and LLM calls and records the session as FAILED.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from rules import gatekeeper
from rules import verdict as verdict_rules
from rules.catalog import Catalog
from server.agents.base import AgentBackend, ExecutorTask, Skill, ToolCallResult
from server.deadline import Deadline, DeadlineExceeded
from server.pipeline import answer_guard, derivation, material
from server.pipeline.events import ChatResult, StageEvent
from server.pipeline.parse import parse_executor_output
from server.tasks import cancel_and_wait
from server.tools import SessionToolBox, ToolBackend
from storage.errors import DatabaseUnavailable, SessionAlreadyExists
from storage.records import RoundRecord, SessionRecord, TraceRecord
from storage.repository import Repository

JSON = dict[str, Any]
Emit = Callable[[StageEvent], None]
log = logging.getLogger("evigate.pipeline")
# A session interrupted by a database outage is recorded FAILED once the database is back.
RECOVERY_FIRST_DELAY_S = 0.5
RECOVERY_MAX_DELAY_S = 10.0
RECOVERY_WINDOW_S = 600.0


class SessionRunning(Exception):  # noqa: N818 - the name the server already maps
    """A session with this id is still running (Chat with a client-chosen id repeated too early)."""


@dataclass(frozen=True)
class PipelineSettings:
    max_rounds: int = 2  # the first round plus one retry after REJECT
    owner: str = "evigate"  # this process's identity, for orphaned-session recovery
    on_success: Callable[[str], None] | None = None  # after the SUCCESS commit (wakes the evaluation worker)
    # (session_id, kind) once a session is decided FAILED, kind being deadline_exceeded | cancelled |
    # database_unavailable | error (the sessions metric; a SUCCESS is counted when it is delivered).
    on_failed: Callable[[str, str], None] | None = None


@dataclass
class _Progress:
    """What a session has done so far: recorded on SUCCESS and on FAILED alike."""

    latencies: list[JSON] = field(default_factory=list)
    prompt_versions: dict[str, str] = field(default_factory=dict)
    rounds: list[JSON] = field(default_factory=list)
    stage: str = "start"
    round: int = 0

    @contextlib.contextmanager
    def stage_of(self, name: str, round_number: int = 0) -> Iterator[None]:
        self.stage, self.round = name, round_number
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - start) * 1000
            self.latencies.append({"stage": name, "round": round_number, "latency_ms": round(elapsed, 3)})

    def where(self) -> str:
        return f"{self.stage} (round {self.round})" if self.round else self.stage

    def version(self, stage: str, prompt_version: str | None) -> None:
        if prompt_version:
            self.prompt_versions[stage] = prompt_version

    def extras(self) -> JSON:
        return {
            "stage_latencies": self.latencies,
            "prompt_versions": self.prompt_versions,
            "verifier_evaluation_rounds": self.rounds,
        }


class Pipeline:
    def __init__(  # noqa: PLR0917 - the composition root passes them positionally
        self,
        repo: Repository,
        tools: ToolBackend,
        agents: AgentBackend,
        skills: Sequence[Skill],
        catalog: Catalog,
        settings: PipelineSettings | None = None,
    ) -> None:
        self._repo = repo
        self._tools = tools
        self._agents = agents
        self._skills = tuple(skills)
        self._catalog = catalog
        self._settings = settings or PipelineSettings()
        self._recoveries: set[asyncio.Task[None]] = set()

    async def aclose(self) -> None:
        """Releases what the agent backend holds (the llm backend's HTTP client); call at shutdown."""
        for task in list(self._recoveries):
            task.cancel()
        await self._agents.aclose()

    async def run(self, query: str, session_id: str | None, language: str, deadline: Deadline) -> ChatResult:
        """Runs a session to its end; a finished session with this id returns its stored result."""
        deadline.check()
        existing = await self._existing(session_id)
        if existing is not None:
            return existing
        return await self._run(query, session_id or _new_id(), language, deadline, emit=None)

    async def stream(
        self, query: str, session_id: str | None, language: str, deadline: Deadline
    ) -> AsyncIterator[StageEvent]:
        """Yields each stage event as it happens, ending with the `result` event."""
        deadline.check()
        existing = await self._existing(session_id)
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
        finally:
            await cancel_and_wait(task)

    async def _existing(self, session_id: str | None) -> ChatResult | None:
        if not session_id:
            return None
        trace = await self._repo.get_trace(session_id)
        if trace is None:
            return None
        if trace.session.status == "RUNNING":
            raise SessionRunning(session_id)
        return result_from_trace(trace)

    async def _run(
        self, query: str, session_id: str, language: str, deadline: Deadline, emit: Emit | None
    ) -> ChatResult:
        """The deadline rule: the server checks its own deadline (the caller's, shortened) before
        the first write, and a timeout on it covers every stage and write after; past it the
        session ends FAILED "deadline exceeded during <stage>", even when a SUCCESS commit raced
        it (the caller never gets that answer). Nothing is written when it passed before the
        session was created."""
        deadline.check()
        try:
            await self._create(session_id, query, language, deadline)
        except DatabaseUnavailable:
            # The connection may have dropped after the INSERT committed: the row can exist, RUNNING.
            self._report_failed(session_id, "database_unavailable")
            self._fail_once_reachable(
                session_id, "the database became unreachable while the session was created", _Progress()
            )
            raise
        except SessionAlreadyExists:
            # Another caller created it between our read and our insert.
            existing = await self._existing(session_id)
            if existing is None:
                raise
            if emit is not None:
                emit(StageEvent(session_id, "result", 0, existing))
            return existing
        progress = _Progress()
        try:
            deadline.check()  # the INSERT may have used up the time left
            async with asyncio.timeout(deadline.remaining()):
                result = await self._stages(
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
                reason, kind = f"deadline exceeded during {progress.where()}", "deadline_exceeded"
            else:  # a timeout of its own (e.g. a database connect), not the caller's deadline
                reason, kind = f"{progress.where()} failed: {type(error).__name__}: {error}", "error"
            # shielded: gRPC may cancel the call at the same moment its deadline passes
            result = await asyncio.shield(
                self._fail_or_later(session_id, reason, progress, kind, undelivered=expired)
            )
        except asyncio.CancelledError:
            # gRPC also cancels the call when the caller's deadline passes (ours passed first then):
            # the reason is the one the caller saw. Shielded: written although this task is cancelled.
            kind = "deadline_exceeded" if deadline.expired() else "cancelled"
            reason = f"{kind.replace('_', ' ')} during {progress.where()}"
            with contextlib.suppress(DatabaseUnavailable):  # recorded once the database is back
                await asyncio.shield(
                    self._fail_or_later(session_id, reason, progress, kind, undelivered=True)
                )
            raise
        except DatabaseUnavailable:
            self._report_failed(session_id, "database_unavailable")
            self._fail_once_reachable(
                session_id, f"the database became unreachable during {progress.where()}", progress
            )
            raise
        except Exception as error:
            log.exception("session failed", extra={"session_id": session_id, "stage": progress.where()})
            reason = f"{progress.where()} failed: {type(error).__name__}: {error}"
            result = await self._fail_or_later(session_id, reason, progress, "error")
        if emit is not None:
            emit(StageEvent(session_id, "result", 0, result))
        return result

    async def _create(self, session_id: str, query: str, language: str, deadline: Deadline) -> None:
        """Creates the RUNNING row. A cancellation can arrive after the INSERT committed but before
        its reply: the row is then still written and recorded FAILED, never left RUNNING."""
        create = asyncio.ensure_future(
            self._repo.create_session(session_id, query, language, self._settings.owner)
        )
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
        except DatabaseUnavailable:  # the INSERT may have committed all the same
            self._report_failed(session_id, kind)
            self._fail_once_reachable(session_id, reason, _Progress())
            return
        except Exception:  # not created (e.g. the id exists: not this call's row)
            return
        with contextlib.suppress(DatabaseUnavailable):  # recorded once the database is back
            await self._fail_or_later(session_id, reason, _Progress(), kind)

    def _report_failed(self, session_id: str, kind: str) -> None:
        if self._settings.on_failed is not None:
            self._settings.on_failed(session_id, kind)

    async def fail_undelivered(self, session_id: str) -> None:
        """A SUCCESS whose answer cannot reach the caller before its deadline (the front end's call):
        recorded FAILED, since the caller sees DEADLINE_EXCEEDED."""
        reason = "deadline exceeded before the answer could be sent"
        await asyncio.shield(self._repo.finish_failed(session_id, reason, {}, undelivered=True))
        self._report_failed(session_id, "deadline_exceeded")

    def _fail_once_reachable(self, session_id: str, reason: str, progress: _Progress) -> None:
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
                    if session is not None and session.status == "RUNNING":
                        await self._fail(session_id, reason, progress)
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

    async def _fail_or_later(
        self, session_id: str, reason: str, progress: _Progress, kind: str, *, undelivered: bool = False
    ) -> ChatResult:
        """`_fail`, and when the database is unreachable, the same in the background once it is back
        (DatabaseUnavailable is still raised). Counted as FAILED (`kind`) either way."""
        self._report_failed(session_id, kind)
        try:
            return await self._fail(session_id, reason, progress, undelivered=undelivered)
        except DatabaseUnavailable:
            self._fail_once_reachable(session_id, reason, progress)
            raise

    async def _fail(
        self, session_id: str, reason: str, progress: _Progress, *, undelivered: bool = False
    ) -> ChatResult:
        """FAILED with the reason; the plan, rounds and invocations are already stored, the extras
        keep the latencies, prompt versions and the rounds' evaluations. `undelivered`: a SUCCESS
        that raced the deadline or a cancellation is failed too."""
        await self._repo.finish_failed(
            session_id, reason, {**progress.extras(), "failed_stage": progress.stage}, undelivered=undelivered
        )
        return ChatResult(session_id, "FAILED", "", None, None, None, None, reason)

    async def _stages(
        self,
        *,
        query: str,
        session_id: str,
        language: str,
        deadline: Deadline,
        progress: _Progress,
        emit: Emit | None,
    ) -> ChatResult:
        def send(kind: str, round_number: int, data: JSON) -> None:
            if emit is not None:
                emit(StageEvent(session_id, kind, round_number, data))

        agents = self._agents
        with progress.stage_of("planner"):
            planned = await agents.planner.plan(query, language, self._skills, deadline)
        progress.version("planner", planned.prompt_version)
        await self._repo.save_plan(
            session_id,
            planned.data,
            {"agent_backend": agents.name, "prompt_versions": progress.prompt_versions},
        )
        send("plan", 0, planned.data)

        async def on_call(call: ToolCallResult) -> None:
            send("tool_invocation", progress.round, _invocation_event(session_id, call))

        toolbox = SessionToolBox(self._tools, self._repo, session_id, on_call)
        retry: JSON | None = None
        last: _Round | None = None
        for round_number in range(1, max(1, self._settings.max_rounds) + 1):
            task = ExecutorTask(query, language, planned.data, round_number, retry, toolbox, deadline)
            last = await self._round(session_id, task, progress, send)
            if last.verdict.get("verdict") != "REJECT":
                break
            retry = material.retry_context(round_number, last.gate, last.verdict, last.parse_status)
        assert last is not None  # at least one round ran

        with progress.stage_of("composer"):
            composed = await agents.composer.compose(
                material.composer_input(query, language, last.structured, last.gate, last.verdict), deadline
            )
        progress.version("composer", composed.prompt_version)
        with progress.stage_of("guard"):
            guarded = answer_guard.apply(
                composed.data, material.negative_claims(material.claims_of(last.structured)), language
            )
        composer_output = guarded.composer_output
        if guarded.lower_verdict and last.verdict.get("verdict") == "PASS":
            # the rewrite could not make the answer safe: it must not go out as PASS
            last.verdict = {
                **last.verdict,
                "verdict": "LOW_CONFID",
                "rationale": f"{last.verdict.get('rationale', '')} [constraint: {_GUARD_LOWERED}]".strip(),
            }
            last.record = replace(
                last.record,
                verdict=last.verdict,
                verdict_override_reason=_joined(last.record.verdict_override_reason, _GUARD_LOWERED),
            )
            await self._repo.save_round(session_id, last.record)
            progress.rounds[-1].update(verdict="LOW_CONFID", rationale=last.verdict["rationale"])
        send("composer_output", 0, composer_output)

        progress.rounds[-1]["composer_output"] = composer_output
        answer = str(composer_output.get("user_facing_answer", ""))
        progress.stage, progress.round = "persist", 0  # a failure from here on is not the guard's
        await self._repo.finish_success(
            session_id,
            answer,
            composer_output,
            progress.rounds[-1],
            progress.rounds,
            {
                "answer_guard_findings": guarded.findings,
                "stage_latencies": progress.latencies,
                "prompt_versions": progress.prompt_versions,
            },
        )
        if self._settings.on_success is not None:
            self._settings.on_success(session_id)
        return ChatResult(
            session_id, "SUCCESS", answer, composer_output, last.verdict, last.gate, last.structured, ""
        )

    async def _round(
        self, session_id: str, task: ExecutorTask, progress: _Progress, send: Callable[[str, int, JSON], None]
    ) -> _Round:
        """Executor → Gatekeeper → Verifier → verdict constraints, saved as one round."""
        agents, round_number = self._agents, task.round
        with progress.stage_of("executor", round_number):
            executed = await agents.executor.execute(task)
        progress.version("executor", executed.prompt_version)
        structured, parse_status = parse_executor_output(executed.raw_text)
        send("executor_evidence", round_number, structured)

        invocations = await self._repo.list_invocations(session_id)
        with progress.stage_of("gatekeeper", round_number):
            outcome = gatekeeper.check(structured, material.invocation_facts(invocations), self._catalog)
        gate = outcome.to_seed()
        send("gatekeeper_result", round_number, gate)

        summary = material.tool_trace_summary(invocations)
        verifier_input = {
            "original_query": task.query,
            "executor_final_answer": executed.raw_text,
            "executor_structured_output": structured,
            "executor_output_parse_status": parse_status,
            "tool_trace_summary": summary,
            "gatekeeper_result": gate,
            "retry_context": task.retry_context,
        }
        with progress.stage_of("verifier", round_number):
            verified = await agents.verifier.verify(verifier_input, task.deadline)
        progress.version("verifier", verified.prompt_version)
        verdict, proposed, override = _constrained(verified.data, gate, parse_status, structured)
        send("verdict", round_number, verdict)
        record = RoundRecord(
            round=round_number,
            executor_raw_text=executed.raw_text,
            executor_output=structured,
            parse_status=parse_status,
            gatekeeper_result=gate,
            verdict=verdict,
            proposed_verdict=proposed,
            verdict_override_reason=override,
            retry_context=task.retry_context,
        )
        await self._repo.save_round(session_id, record)
        progress.rounds.append(
            material.verifier_evaluation(round_number, verdict, parse_status, structured, gate, summary, None)
        )
        return _Round(record, structured, parse_status, gate, verdict)


_GUARD_LOWERED = "the answer guard found an over-statement the rewrite could not remove"


@dataclass
class _Round:
    record: RoundRecord
    structured: JSON
    parse_status: JSON
    gate: JSON
    verdict: JSON


def _joined(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second


def _constrained(
    proposed: JSON, gate: JSON, parse_status: JSON, structured: JSON
) -> tuple[JSON, str | None, str]:
    """Applies the code-enforced verdict constraints, whatever the Verifier said: the Gatekeeper
    severity ceiling, no PASS over an unparsed output, and no claim stating facts its verified
    excerpts lack."""
    label = str(proposed.get("verdict", "REJECT"))
    decision = verdict_rules.constrain(label, str(gate.get("severity", "reject")))
    final, reason = decision.verdict, decision.reason if decision.overridden else ""
    if parse_status.get("status") != "valid" and final != "REJECT":
        final, reason = "REJECT", "the executor output did not parse into executor_evidence_v2"
    verdict = {**proposed, "verdict": final}
    underived = derivation.check_claims(material.claims_of(structured), gate)
    if underived:
        verdict["claim_checks"] = _unsupported(verdict.get("claim_checks"), underived)
        if final != "REJECT":
            listed = "; ".join(f"{claim_id}: {', '.join(facts)}" for claim_id, facts in underived.items())
            final, reason = "REJECT", f"claims state facts absent from their verified excerpts ({listed})"
            verdict["verdict"] = final
    if final == "PASS" and not material.claims_of(structured):
        # Nothing was claimed, so nothing was verified: a PASS here would vouch for whatever the
        # Composer writes (e.g. an injected "the system is healthy").
        final, reason = "LOW_CONFID", "no claims: a PASS needs at least one claim its citations support"
        verdict["verdict"] = final
    if reason:
        verdict["rationale"] = f"{proposed.get('rationale', '')} [constraint: {reason}]".strip()
    return verdict, label, reason


def _unsupported(checks: Any, underived: dict[str, list[str]]) -> list[JSON]:
    """The claim checks with every claim that has underived facts marked unsupported."""
    out = [dict(c) for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []
    seen = set()
    for check in out:
        facts = underived.get(str(check.get("claim_id")))
        if facts:
            seen.add(str(check.get("claim_id")))
            check["supported"] = False
            known = [f for f in check.get("unsupported_facts") or [] if f not in facts]
            check["unsupported_facts"] = [*known, *facts]
            check["reason"] = f"{check.get('reason', '')} [facts absent from the verified excerpts]".strip()
    for claim_id, facts in underived.items():
        if claim_id not in seen:
            out.append(
                {
                    "claim_id": claim_id,
                    "supported": False,
                    "reason": "facts absent from the verified excerpts",
                    "unsupported_facts": facts,
                }
            )
    return out


def _invocation_event(session_id: str, call: ToolCallResult) -> JSON:
    return {
        "id": call.invocation_id,
        "session_id": session_id,
        "tool_name": call.tool_name,
        "arguments": call.arguments,
        "status": call.status,
        "error": call.error or "",
        "raw_result": call.raw_result,
        "retrieval_details": call.retrieval_details,
        "latency_ms": call.latency_ms,
        **({"create_time": _rfc3339(call.created_at)} if call.created_at is not None else {}),
    }


def _rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


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


def _new_id() -> str:
    return uuid.uuid4().hex
