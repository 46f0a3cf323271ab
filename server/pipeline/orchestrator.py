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
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rules import gatekeeper, guard
from rules import verdict as verdict_rules
from rules.catalog import Catalog
from server.agents.base import AgentBackend, ExecutorTask, Skill, ToolCallResult
from server.deadline import Deadline, DeadlineExceeded
from server.pipeline import material
from server.pipeline.events import ChatResult, StageEvent
from server.pipeline.parse import parse_executor_output
from server.tools import SessionToolBox, ToolBackend
from storage.errors import DatabaseUnavailable, SessionAlreadyExists
from storage.records import RoundRecord, SessionRecord, TraceRecord
from storage.repository import Repository

JSON = dict[str, Any]
Emit = Callable[[StageEvent], None]
log = logging.getLogger("evigate.pipeline")


class SessionRunning(Exception):
    """A session with this id is still running (Chat with a client-chosen id repeated too early)."""


@dataclass(frozen=True)
class PipelineSettings:
    max_rounds: int = 2  # the first round plus one retry after REJECT
    owner: str = "evigate"  # this process's identity, for orphaned-session recovery


class _StageTimer:
    def __init__(self) -> None:
        self.latencies: list[JSON] = []

    @contextlib.contextmanager
    def stage(self, name: str, round_number: int = 0) -> Any:
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - start) * 1000
            self.latencies.append({"stage": name, "round": round_number, "latency_ms": round(elapsed, 3)})


class Pipeline:
    def __init__(
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

    async def run(self, query: str, session_id: str | None, language: str, deadline: Deadline) -> ChatResult:
        """Runs a session to its end; a finished session with this id returns its stored result."""
        existing = await self._existing(session_id)
        if existing is not None:
            return existing
        return await self._run(query, session_id or _new_id(), language, deadline, emit=None)

    async def stream(
        self, query: str, session_id: str | None, language: str, deadline: Deadline
    ) -> AsyncIterator[StageEvent]:
        """Yields each stage event as it happens, ending with the `result` event."""
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
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

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
        try:
            await self._repo.create_session(session_id, query, language, self._settings.owner)
        except SessionAlreadyExists:
            # Another caller created it between our read and our insert.
            existing = await self._existing(session_id)
            if existing is None:
                raise
            if emit is not None:
                emit(StageEvent(session_id, "result", 0, existing))
            return existing
        timer = _StageTimer()
        try:
            async with asyncio.timeout(deadline.remaining()):
                result = await self._stages(query, session_id, language, deadline, timer, emit)
        except (DeadlineExceeded, TimeoutError):
            result = await self._fail(session_id, "deadline exceeded before the pipeline finished", timer)
        except asyncio.CancelledError:
            await asyncio.shield(self._fail(session_id, "cancelled by the client", timer))
            raise
        except DatabaseUnavailable:
            raise
        except Exception as error:
            log.exception("session failed", extra={"session_id": session_id})
            result = await self._fail(session_id, f"{type(error).__name__}: {error}", timer)
        if emit is not None:
            emit(StageEvent(session_id, "result", 0, result))
        return result

    async def _fail(self, session_id: str, reason: str, timer: _StageTimer) -> ChatResult:
        await self._repo.finish_failed(session_id, reason, {"stage_latencies": timer.latencies})
        return ChatResult(session_id, "FAILED", "", None, None, None, None, reason)

    async def _stages(
        self,
        query: str,
        session_id: str,
        language: str,
        deadline: Deadline,
        timer: _StageTimer,
        emit: Emit | None,
    ) -> ChatResult:
        def send(kind: str, round_number: int, data: JSON) -> None:
            if emit is not None:
                emit(StageEvent(session_id, kind, round_number, data))

        agents = self._agents
        with timer.stage("planner"):
            planned = await agents.planner.plan(query, language, self._skills, deadline)
        prompt_versions = {"planner": planned.prompt_version} if planned.prompt_version else {}
        await self._repo.save_plan(
            session_id, planned.data, {"agent_backend": agents.name, "prompt_versions": prompt_versions}
        )
        send("plan", 0, planned.data)

        round_number = 0
        current_round = 0

        async def on_call(call: ToolCallResult) -> None:
            send("tool_invocation", current_round, _invocation_event(session_id, call))

        toolbox = SessionToolBox(self._tools, self._repo, session_id, on_call)
        retry: JSON | None = None
        rounds: list[JSON] = []
        structured: JSON = {}
        gate: JSON = {}
        verdict: JSON = {}
        summary: list[JSON] = []
        parse_status: JSON = {}
        for round_number in range(1, self._settings.max_rounds + 1):
            current_round = round_number
            task = ExecutorTask(query, language, planned.data, round_number, retry, toolbox, deadline)
            with timer.stage("executor", round_number):
                executed = await agents.executor.execute(task)
            if executed.prompt_version:
                prompt_versions["executor"] = executed.prompt_version
            structured, parse_status = parse_executor_output(executed.raw_text)
            send("executor_evidence", round_number, structured)

            invocations = await self._repo.list_invocations(session_id)
            with timer.stage("gatekeeper", round_number):
                outcome = gatekeeper.check(structured, material.invocation_facts(invocations), self._catalog)
            gate = outcome.to_seed()
            send("gatekeeper_result", round_number, gate)

            summary = material.tool_trace_summary(invocations)
            verifier_input = {
                "original_query": query,
                "executor_final_answer": executed.raw_text,
                "executor_structured_output": structured,
                "executor_output_parse_status": parse_status,
                "tool_trace_summary": summary,
                "gatekeeper_result": gate,
                "retry_context": retry,
            }
            with timer.stage("verifier", round_number):
                verified = await agents.verifier.verify(verifier_input, deadline)
            if verified.prompt_version:
                prompt_versions["verifier"] = verified.prompt_version
            verdict, proposed, override = _constrained(verified.data, gate, parse_status)
            send("verdict", round_number, verdict)
            await self._repo.save_round(
                session_id,
                RoundRecord(
                    round=round_number,
                    executor_raw_text=executed.raw_text,
                    executor_output=structured,
                    parse_status=parse_status,
                    gatekeeper_result=gate,
                    verdict=verdict,
                    proposed_verdict=proposed,
                    verdict_override_reason=override,
                    retry_context=retry,
                ),
            )
            rounds.append(
                material.verifier_evaluation(round_number, verdict, parse_status, structured, gate, summary, None)
            )
            if verdict.get("verdict") != "REJECT":
                break
            retry = material.retry_context(round_number, gate, verdict, parse_status)

        with timer.stage("composer"):
            composed = await agents.composer.compose(
                material.composer_input(query, language, structured, gate, verdict), deadline
            )
        if composed.prompt_version:
            prompt_versions["composer"] = composed.prompt_version
        with timer.stage("guard"):
            composer_output, findings = _guarded(composed.data, structured, language)
        send("composer_output", 0, composer_output)

        rounds[-1]["composer_output"] = composer_output
        answer = str(composer_output.get("user_facing_answer", ""))
        await self._repo.finish_success(
            session_id,
            answer,
            composer_output,
            rounds[-1],
            rounds,
            {
                "answer_guard_findings": findings,
                "stage_latencies": timer.latencies,
                "prompt_versions": prompt_versions,
            },
        )
        return ChatResult(session_id, "SUCCESS", answer, composer_output, verdict, gate, structured, "")


def _constrained(proposed: JSON, gate: JSON, parse_status: JSON) -> tuple[JSON, str | None, str]:
    """Applies the code-enforced verdict constraints, whatever the Verifier said."""
    label = str(proposed.get("verdict", "REJECT"))
    decision = verdict_rules.constrain(label, str(gate.get("severity", "reject")))
    final, reason = decision.verdict, decision.reason if decision.overridden else ""
    if parse_status.get("status") != "valid" and final != "REJECT":
        final, reason = "REJECT", "the executor output did not parse into executor_evidence_v2"
    verdict = {**proposed, "verdict": final}
    if reason:
        verdict["rationale"] = f"{proposed.get('rationale', '')} [constraint: {reason}]".strip()
    return verdict, label, reason


def _guarded(output: JSON, structured: JSON, language: str) -> tuple[JSON, list[JSON]]:
    """Runs the answer guard over every text field of the Composer's output and rewrites
    over-statements of negative evidence into the safe phrasing."""
    claims = structured.get("claims")
    negatives = material.negative_claims([c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else [])
    guarded = dict(output)
    recorded: list[JSON] = []
    for field in ("user_facing_answer", "answer_summary"):
        text = str(guarded.get(field, ""))
        found = guard.scan(text, negatives)
        if found:
            guarded[field] = guard.rewrite(text, found, language)
            recorded.extend({**finding.to_seed(), "action": "rewritten"} for finding in found)
    return guarded, recorded


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
    }


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
