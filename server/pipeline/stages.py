"""The stage sequence of one session: Planner, then Executor → Gatekeeper → Verifier rounds (one
retry after REJECT), then the Composer with the answer guard and the answer check; each stage's
output persisted and emitted as it happens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from evigate.rules import gatekeeper
from evigate.rules.enums import SessionStatus, Verdict
from evigate.rules.rule_catalog import RuleCatalog
from evigate.server.agents.base import CLAIMS_BY, AgentBackend, ExecutorTask, Skill, claims_by
from evigate.server.deadline import Deadline
from evigate.server.pipeline import answer_check_stage, fallbacks, material, verdicts
from evigate.server.pipeline.compose_stage import compose_answer
from evigate.server.pipeline.events import ChatResult, StageEvent
from evigate.server.pipeline.parse import parse_executor_output
from evigate.server.pipeline.progress import Progress
from evigate.server.tools import SessionToolBox, ToolBackend
from evigate.server.tools.calls import ToolCallResult
from evigate.storage.records import InvocationRecord, RoundRecord
from evigate.storage.repository import Repository

JSON = dict[str, Any]
Emit = Callable[[StageEvent], None]


class StageSequence:
    def __init__(  # noqa: PLR0917 - the pipeline passes them positionally
        self,
        repo: Repository,
        tools: ToolBackend,
        agents: AgentBackend,
        skills: Sequence[Skill],
        catalog: RuleCatalog,
        max_rounds: int,
        on_success: Callable[[str], None] | None,
    ) -> None:
        self._repo = repo
        self._tools = tools
        self._agents = agents
        self._skills = tuple(skills)
        self._catalog = catalog
        self._max_rounds = max_rounds
        self._on_success = on_success

    async def run(
        self,
        *,
        query: str,
        session_id: str,
        language: str,
        deadline: Deadline,
        progress: Progress,
        emit: Emit | None,
    ) -> ChatResult:
        def send(kind: str, round_number: int, data: JSON) -> None:
            if emit is not None:
                emit(StageEvent(session_id, kind, round_number, data))

        agents = self._agents
        with progress.stage_of("planner"):
            planned = await agents.planner.plan(query, language, self._skills, deadline)
        progress.version("planner", planned.prompt_version)
        progress.note("planner", 0, planned.notes)
        await self._repo.save_plan(
            session_id,
            planned.data,
            {
                "agent_backend": agents.name,
                "stage_backends": agents.backends(),
                "prompt_versions": progress.prompt_versions,
            },
        )
        send("plan", 0, planned.data)

        async def on_call(call: ToolCallResult) -> None:
            send("tool_invocation", progress.round, _invocation_event(session_id, call))

        toolbox = SessionToolBox(self._tools, self._repo, session_id, on_call)
        retry: JSON | None = None
        last: _Round | None = None
        for round_number in range(1, max(1, self._max_rounds) + 1):
            task = ExecutorTask(query, language, planned.data, round_number, retry, toolbox, deadline)
            last = await self._round(session_id, task, progress, send)
            if last.verdict.get("verdict") != Verdict.REJECT:
                break
            retry = material.retry_context(round_number, last.gate, last.verdict, last.parse_status)
        assert last is not None  # at least one round ran

        composer_input = material.composer_input(query, language, last.structured, last.gate, last.verdict)
        # The last round read every call of the session after its Executor ran; none came since.
        allowed = answer_check_stage.material_for(
            composer_input, last.gate, last.invocations, agents.composer_phrases
        )
        grounded = answer_check_stage.grounded_input(composer_input, allowed)
        composed = await compose_answer(
            agents.composer,
            grounded,
            allowed,
            material.negative_claims(material.claims_of(last.structured)),
            deadline,
            progress.stage_of,
            material.sentence_material(grounded, last.gate, last.invocations),
            fallback=agents.fallback_composer,
        )
        progress.version("composer", composed.prompt_version)
        progress.note("composer", 0, composed.notes)
        composer_output = fallbacks.with_notice(composed.composer_output, progress.notes, language)
        if composed.lower_verdict and last.verdict.get("verdict") == Verdict.PASS:
            # the rewrite could not make the answer safe: it must not go out as PASS
            last.verdict, last.record = verdicts.lowered_by_guard(last.verdict, last.record)
            await self._repo.save_round(session_id, last.record)
            progress.rounds[-1].update(verdict=Verdict.LOW_CONFID, rationale=last.verdict["rationale"])
        send("composer_output", 0, composer_output)

        progress.rounds[-1]["composer_output"] = composer_output
        progress.rounds[-1]["answer_check_rejections"] = composed.check.rejections
        answer = str(composer_output.get("user_facing_answer", ""))
        progress.stage, progress.round = "persist", 0  # a failure from here on is not the guard's
        await self._repo.finish_success(
            session_id,
            answer,
            composer_output,
            progress.rounds[-1],
            progress.rounds,
            {
                "answer_guard_findings": composed.guard_findings,
                "answer_check": composed.check.to_seed(),
                "stage_latencies": progress.latencies,
                "prompt_versions": progress.prompt_versions,
                "stage_notes": progress.notes,
            },
        )
        if self._on_success is not None:
            self._on_success(session_id)
        return ChatResult(
            session_id,
            SessionStatus.SUCCESS,
            answer,
            composer_output,
            last.verdict,
            last.gate,
            last.structured,
            "",
            tuple(progress.latencies),
            composed.check.to_seed(),
        )

    async def _round(
        self, session_id: str, task: ExecutorTask, progress: Progress, send: Callable[[str, int, JSON], None]
    ) -> _Round:
        """Executor → Gatekeeper → Verifier → verdict constraints, saved as one round."""
        agents, round_number = self._agents, task.round
        with progress.stage_of("executor", round_number):
            executed = await agents.executor.execute(task)
        progress.version("executor", executed.prompt_version)
        progress.note("executor", round_number, executed.notes)
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
            # who wrote the claims: a model Verifier may not sink code's verified claims alone
            CLAIMS_BY: claims_by(agents, executed.notes),
        }
        with progress.stage_of("verifier", round_number):
            verified = await agents.verifier.verify(verifier_input, task.deadline)
        progress.version("verifier", verified.prompt_version)
        progress.note("verifier", round_number, verified.notes)
        verdict, proposed, override = verdicts.constrained(verified.data, gate, parse_status, structured)
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
        return _Round(record, structured, parse_status, gate, verdict, invocations)


@dataclass
class _Round:
    record: RoundRecord
    structured: JSON
    parse_status: JSON
    gate: JSON
    verdict: JSON
    invocations: list[InvocationRecord]  # every call of the session, read after this round's Executor


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
