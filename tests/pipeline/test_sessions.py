"""The orchestrator end to end with offline agents, the real fixture tools and the real storage
(SQLite and MariaDB): the docs/design.md §8.8 reference sessions, stream event order, idempotent repeats,
the persisted trace, tool failures, stage failures, cancellation and the answer guard."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from evigate.rules import guard
from evigate.server.agents.base import AgentBackend, ExecutorOutput, ExecutorTask, StageOutput
from evigate.server.agents.offline import build_offline_backend
from evigate.server.codec import from_seed
from evigate.server.deadline import Deadline
from evigate.server.pipeline import ChatResult, Pipeline, SessionRunning, StageEvent, material
from evigate.storage import Database
from evigate.v1 import verdict_pb2
from tests.pipeline import demo_data as demo
from tests.pipeline.conftest import BuildPipeline

JSON = dict[str, Any]
HIGH_CPU = "payment-service 现在有 HighCPUUsage 告警吗？"
HIKARI_NEGATIVE = "inventory-service 有 HikariCP 连接池耗尽的日志吗？"
STAGES = {"planner", "executor", "gatekeeper", "verifier", "composer", "guard", "answer_check"}


async def _stream(pipeline: Pipeline, query: str, session_id: str | None = None) -> list[StageEvent]:
    return [event async for event in pipeline.stream(query, session_id, "zh", Deadline.after(30))]


# -- docs/design.md §8.8 reference sessions --------------------------------------------------------
async def test_reference_session_high_cpu(db: Database, pipeline: Pipeline) -> None:
    (alert,) = demo.matching_alerts("payment-service", "HighCPUUsage", "firing")
    assert alert["current"] == "92%"

    result = await pipeline.run(HIGH_CPU, None, "zh", Deadline.after(30))

    assert result.status == "SUCCESS" and result.verdict is not None and result.evidence is not None
    assert result.verdict["verdict"] == "PASS"
    (claim,) = result.evidence["claims"]  # exactly one claim: nothing out of scope
    assert claim["claim_type"] == "observation"
    (binding,) = claim["evidence_bindings"]
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None
    (invocation,) = trace.invocations
    assert binding["tool_name"] == invocation.tool_name == "query_metrics"
    assert binding["source_invocation_id"] == invocation.id
    assert binding["raw_path"] == "$.alerts[0]"
    assert "current=92%" in binding["evidence_excerpt"]
    assert "HighCPUUsage, service=payment-service, state=firing" in binding["evidence_excerpt"]
    assert result.gatekeeper_result is not None and result.gatekeeper_result["severity"] == "none"
    assert "92%" in result.answer
    assert result.evidence["hypotheses"] == [] and result.evidence["missing_info"] == []


async def test_reference_session_hikaricp_negative(db: Database, pipeline: Pipeline) -> None:
    assert demo.matching_logs("inventory-service", "HikariCP|HikariPool") == []

    result = await pipeline.run(HIKARI_NEGATIVE, None, "zh", Deadline.after(30))

    assert result.status == "SUCCESS" and result.verdict is not None and result.evidence is not None
    assert result.verdict["verdict"] == "PASS"
    (claim,) = result.evidence["claims"]
    assert claim["claim_type"] == "negative_observation"
    (binding,) = claim["evidence_bindings"]
    assert binding["raw_path"] == "$.no_evidence"
    assert binding["tool_name"] == "query_logs"
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None
    (invocation,) = trace.invocations  # one exact query, never widened afterwards
    assert invocation.arguments["service"] == "inventory-service"
    assert invocation.retrieval_details["evidence_status"] == "no_evidence"
    assert binding["source_invocation_id"] == invocation.id
    assert "当前查询未检索到" in result.answer
    assert guard.scan(result.answer, [claim]) == []
    assert guard.scan(result.answer, []) == []
    stored = await db.repo.get_session(result.session_id)
    assert stored is not None and stored.answer == result.answer
    assert stored.extras is not None and stored.extras["answer_guard_findings"] == []


# -- stream events, idempotency, RUNNING -------------------------------------------------------
async def test_stream_events_in_stage_order(db: Database, pipeline: Pipeline) -> None:
    events = await _stream(pipeline, HIGH_CPU, "stream-1")

    assert [(e.kind, e.round) for e in events] == [
        ("plan", 0),
        ("tool_invocation", 1),
        ("executor_evidence", 1),
        ("gatekeeper_result", 1),
        ("verdict", 1),
        ("composer_output", 0),
        ("result", 0),
    ]
    assert {e.session_id for e in events} == {"stream-1"}
    trace = await db.repo.get_trace("stream-1")
    assert trace is not None
    invocation_event = events[1].data
    assert isinstance(invocation_event, dict)
    assert invocation_event["id"] == trace.invocations[0].id
    assert invocation_event["retrieval_details"]["evidence_refs"][0]["raw_path"] == "$.alerts[0]"
    final = events[-1].data
    assert isinstance(final, ChatResult) and final.status == "SUCCESS"
    assert events[5].data == final.composer_output
    assert events[4].data == final.verdict


class _Untouchable:
    """A stage that must not run."""

    async def plan(self, *args: object) -> StageOutput:
        raise AssertionError("planner ran")

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        raise AssertionError("executor ran")

    async def verify(self, *args: object) -> StageOutput:
        raise AssertionError("verifier ran")

    async def compose(self, *args: object) -> StageOutput:
        raise AssertionError("composer ran")


UNTOUCHABLE = AgentBackend("untouchable", _Untouchable(), _Untouchable(), _Untouchable(), _Untouchable())


async def test_repeating_a_finished_session_returns_the_stored_result(
    db: Database, pipeline: Pipeline, build_pipeline: BuildPipeline
) -> None:
    first = await pipeline.run(HIGH_CPU, "same-id", "zh", Deadline.after(30))
    calls = len(await db.repo.list_invocations("same-id"))

    again = build_pipeline(agents=UNTOUCHABLE)
    repeated = await again.run("a different question this time", "same-id", "en", Deadline.after(30))
    streamed = await _stream(again, HIGH_CPU, "same-id")

    assert repeated == first
    assert [(e.kind, e.data) for e in streamed] == [("result", first)]
    assert len(await db.repo.list_invocations("same-id")) == calls
    stats = await db.repo.job_stats()
    assert stats.pending == 1  # one evaluation job, not one per call


async def test_running_session_id_raises_session_running(db: Database, build_pipeline: BuildPipeline) -> None:
    await db.repo.create_session("busy", HIGH_CPU, "zh", "another-replica")
    pipeline = build_pipeline(agents=UNTOUCHABLE)
    with pytest.raises(SessionRunning):
        await pipeline.run(HIGH_CPU, "busy", "zh", Deadline.after(30))
    with pytest.raises(SessionRunning):
        await _stream(pipeline, HIGH_CPU, "busy")


# -- the persisted trace -----------------------------------------------------------------------
async def test_persisted_trace(db: Database, pipeline: Pipeline) -> None:
    result = await pipeline.run(HIGH_CPU, "traced", "zh", Deadline.after(30))
    trace = await db.repo.get_trace("traced")
    assert trace is not None
    session = trace.session

    assert session.status == "SUCCESS" and session.answer == result.answer
    assert session.planner_plan is not None and session.planner_plan["selected_skill"]
    assert session.meta is not None and session.meta["agent_backend"] == "offline"
    (round_1,) = trace.rounds
    assert round_1.round == 1 and round_1.retry_context is None
    assert round_1.parse_status["status"] == "valid"
    assert round_1.verdict is not None and round_1.verdict["verdict"] == "PASS"
    assert round_1.proposed_verdict == "PASS" and round_1.verdict_override_reason == ""
    assert round_1.executor_output == result.evidence

    evaluation = session.self_evaluation
    assert evaluation is not None
    final = evaluation["verifier_evaluation"]
    assert evaluation["verifier_evaluation_rounds"] == [final]
    assert final["traceability_version"] == "v1"
    assert final["round"] == 1 and final["verdict"] == "PASS"
    assert final["executor_output_parse_status"]["status"] == "valid"
    assert final["executor_structured_output"] == result.evidence
    assert final["gatekeeper_result"]["rule_set_version"].startswith("gatekeeper-rules-")
    assert final["composer_output"] == session.composer_output == result.composer_output
    (summary,) = final["tool_trace_summary"]
    assert summary == {
        "source_invocation_id": trace.invocations[0].id,
        "tool_name": "query_metrics",
        "status": "success",
        "evidence_status": "supported",
        "raw_paths": ["$.alerts[0]"],
    }
    for key in ("groundedness_score", "critical_fact_count", "claim_checks", "facts_checked", "rationale"):
        assert final[key] == round_1.verdict[key]

    assert session.extras is not None
    latencies = session.extras["stage_latencies"]
    assert {item["stage"] for item in latencies} == STAGES
    assert all(item["latency_ms"] >= 0 for item in latencies)
    assert {(item["stage"], item["round"]) for item in latencies} >= {("executor", 1), ("verifier", 1)}

    from_seed(verdict_pb2.VerifierEvaluation, final)  # fits the contract's typed view
    jobs = await db.repo.claim_jobs("test-worker", "evidence_score", 10, 30.0)
    assert [(job.kind, job.session_id) for job in jobs] == [("evidence_score", "traced")]


# -- tool failures -----------------------------------------------------------------------------
async def test_failed_tool_gives_missing_info_never_a_negative_observation(
    db: Database, build_pipeline: BuildPipeline, corrupt_world: Path
) -> None:
    result = await build_pipeline(data_dir=corrupt_world).run(HIKARI_NEGATIVE, None, "zh", Deadline.after(30))

    assert result.status == "SUCCESS" and result.verdict is not None and result.evidence is not None
    assert result.verdict["verdict"] != "PASS"
    assert [c for c in result.evidence["claims"] if c["claim_type"] == "negative_observation"] == []
    # the logs that could not be checked, in words, never the raw call
    assert any(_logs_not_checked(item) for item in result.evidence["missing_info"])
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None and trace.invocations
    for invocation in trace.invocations:
        assert invocation.status == "failed"
        assert invocation.retrieval_details["evidence_status"] == "failed"
        assert invocation.retrieval_details["evidence_refs"] == []
        assert "inventory-service.ndjson" in (invocation.error or "")
    assert "当前查询未检索到" not in result.answer


async def test_failed_tool_beside_a_hit(
    db: Database, build_pipeline: BuildPipeline, corrupt_world: Path
) -> None:
    query = "inventory-service 有 PodRestartsHigh 告警吗？有 HikariCP 日志吗？"
    result = await build_pipeline(data_dir=corrupt_world).run(query, None, "zh", Deadline.after(30))

    assert result.status == "SUCCESS" and result.verdict is not None and result.evidence is not None
    claims = result.evidence["claims"]
    assert [(c["claim_type"], c["evidence_bindings"][0]["raw_path"]) for c in claims] == [
        ("observation", "$.alerts[0]")
    ]  # the alert is stated; the failed log query yields no claim at all
    assert demo.matching_alerts("inventory-service", "PodRestartsHigh")
    # the logs that could not be checked, in words, never the raw call
    assert any(_logs_not_checked(item) for item in result.evidence["missing_info"])
    assert "当前查询未检索到" not in result.answer


# -- retries, stage failures, cancellation, the answer guard -------------------------------------
class _ForgingOnce:
    """Round 1 cites an invocation id that does not exist; later rounds are the offline Executor's."""

    def __init__(self) -> None:
        self._inner = build_offline_backend().executor
        self.tasks: list[ExecutorTask] = []

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        self.tasks.append(task)
        output = await self._inner.execute(task)
        if task.round == 1:
            output = dataclasses.replace(
                output,
                raw_text=output.raw_text.replace('"source_invocation_id": ', '"source_invocation_id": 9', 1),
            )
        return output


@pytest.mark.parametrize("max_rounds", [2, 1])
async def test_rejected_round_retries_with_context(
    db: Database, build_pipeline: BuildPipeline, max_rounds: int
) -> None:
    executor = _ForgingOnce()
    agents = dataclasses.replace(build_offline_backend(), executor=executor)
    result = await build_pipeline(agents=agents, max_rounds=max_rounds).run(
        HIGH_CPU, "retry", "zh", Deadline.after(30)
    )
    trace = await db.repo.get_trace("retry")
    assert trace is not None and result.verdict is not None

    assert trace.rounds[0].verdict is not None and trace.rounds[0].verdict["verdict"] == "REJECT"
    assert len(trace.rounds) == max_rounds
    if max_rounds == 1:
        assert result.verdict["verdict"] == "REJECT"
        assert "92%" not in result.answer  # nothing from a rejected round reaches the user
        return
    assert result.verdict["verdict"] == "PASS"
    context = trace.rounds[1].retry_context
    assert context is not None and context == executor.tasks[1].retry_context
    assert context["previous_round"] == 1
    gate_1 = trace.rounds[0].gatekeeper_result
    assert gate_1 is not None and gate_1["failed_rules"] == ["citation.invocation_exists"]
    assert set(gate_1["failed_rules"]) <= set(context["failed_rules"])
    assert any("source_invocation_id=9" in error["message"] for error in context["errors"])
    assert trace.session.self_evaluation is not None
    assert [r["round"] for r in trace.session.self_evaluation["verifier_evaluation_rounds"]] == [1, 2]


class _BrokenComposer:
    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        raise RuntimeError("composer backend exploded")


async def test_failing_stage_ends_failed_with_everything_recorded(
    db: Database, build_pipeline: BuildPipeline
) -> None:
    agents = dataclasses.replace(build_offline_backend(), composer=_BrokenComposer())
    result = await build_pipeline(agents=agents).run(HIGH_CPU, "broken", "zh", Deadline.after(30))

    assert result.status == "FAILED"
    assert result.failure_reason.startswith("composer failed: RuntimeError: composer backend exploded")
    trace = await db.repo.get_trace("broken")
    assert trace is not None
    assert trace.session.status == "FAILED" and trace.session.failure_reason == result.failure_reason
    assert trace.session.planner_plan is not None
    assert len(trace.rounds) == 1 and len(trace.invocations) == 1
    extras = trace.session.extras
    assert extras is not None and extras["failed_stage"] == "composer"
    assert [r["round"] for r in extras["verifier_evaluation_rounds"]] == [1]
    assert {item["stage"] for item in extras["stage_latencies"]} == STAGES - {"guard", "answer_check"}
    assert (await db.repo.job_stats()).pending == 0  # no evaluation of a failed session


class _Stuck:
    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        await task.tools.call("query_metrics", {"service": "payment-service"}, task.deadline)
        self.started.set()
        await asyncio.sleep(3600)
        raise AssertionError("not reached")


async def test_cancellation_records_failed(db: Database, build_pipeline: BuildPipeline) -> None:
    stuck = _Stuck()
    pipeline = build_pipeline(agents=dataclasses.replace(build_offline_backend(), executor=stuck))
    task = asyncio.create_task(pipeline.run(HIGH_CPU, "cancelled", "zh", Deadline.after(30)))
    await asyncio.wait_for(stuck.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    session = await db.repo.get_session("cancelled")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason == "cancelled during executor (round 1)"
    assert len(await db.repo.list_invocations("cancelled")) == 1


async def test_stream_consumer_leaving_cancels_the_session(
    db: Database, build_pipeline: BuildPipeline
) -> None:
    stuck = _Stuck()
    pipeline = build_pipeline(agents=dataclasses.replace(build_offline_backend(), executor=stuck))
    stream = aiter(pipeline.stream(HIGH_CPU, "left", "zh", Deadline.after(30)))
    assert isinstance(stream, AsyncGenerator)
    first = await anext(stream)
    assert first.kind == "plan"
    await asyncio.wait_for(stuck.started.wait(), 10)
    await stream.aclose()

    session = await db.repo.get_session("left")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason is not None and session.failure_reason.startswith(
        "cancelled during executor"
    )


async def test_deadline_ends_the_session_failed(db: Database, build_pipeline: BuildPipeline) -> None:
    stuck = _Stuck()
    pipeline = build_pipeline(agents=dataclasses.replace(build_offline_backend(), executor=stuck))
    # The executor never returns on its own: the run ends only because the deadline ended it.
    # The deadline leaves the stages before it time to run on a loaded machine.
    result = await pipeline.run(HIGH_CPU, "late", "zh", Deadline.after(3.0))

    assert result.status == "FAILED"
    assert result.failure_reason == "deadline exceeded during executor (round 1)"
    assert stuck.started.is_set()
    session = await db.repo.get_session("late")
    assert session is not None and session.status == "FAILED" and session.extras is not None
    assert session.extras["failed_stage"] == "executor"


class _Overstating:
    """The offline Composer, then an over-statement appended to the answer (a sentence bound to the
    first claim it cites) and to an action."""

    def __init__(self, sentence: str) -> None:
        self._inner = build_offline_backend().composer
        self._sentence = sentence

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        output = await self._inner.compose(composer_input, deadline)
        data = dict(output.data)
        bound = next(x["claim_ids"] for x in data["sentences"] if x["claim_ids"])
        said = {"kind": "absence", "text": self._sentence, "claim_ids": bound, "hypothesis_ids": []}
        data["sentences"] = [*data["sentences"], said]
        data["recommended_actions"] = [{"action_text": self._sentence, "reason": "日志层面已排除"}]
        return StageOutput(data, output.prompt_version)


async def test_answer_guard_rewrites_overstatements(db: Database, build_pipeline: BuildPipeline) -> None:
    agents = dataclasses.replace(build_offline_backend(), composer=_Overstating("连接池耗尽的问题不存在。"))
    result = await build_pipeline(agents=agents).run(HIKARI_NEGATIVE, "guarded", "zh", Deadline.after(30))

    assert result.status == "SUCCESS" and result.evidence is not None and result.composer_output is not None
    negatives = material.negative_claims(result.evidence["claims"])
    assert "问题不存在" not in result.answer
    assert guard.scan(result.answer, negatives) == []
    assert "当前查询未检索到" in result.answer  # the safe phrasing, or the offline Composer's own
    for action in result.composer_output["recommended_actions"]:
        assert (
            guard.scan(action["action_text"], negatives) == []
            and guard.scan(action["reason"], negatives) == []
        )
    session = await db.repo.get_session("guarded")
    assert session is not None and session.answer == result.answer and session.extras is not None
    findings = session.extras["answer_guard_findings"]
    # the rewritten sentence is the safe phrasing bound to the negative claim it speaks for: the
    # sentence check passes it as written, with no second attempt
    assert session.extras["answer_check"]["rejections"] == []
    sentences = result.composer_output["sentences"]
    appended = len(sentences) - 1
    assert sentences[appended]["kind"] == "absence"
    assert sentences[appended]["claim_ids"] == [negatives[0]["claim_id"]]
    assert sentences[appended]["text"].startswith("当前查询")
    assert {f["field"] for f in findings} == {
        f"sentences[{appended}]",
        "recommended_actions[0].action_text",
        "recommended_actions[0].reason",
    }
    assert {f["action"] for f in findings} == {"rewritten"}
    assert all(f["claim_id"] == negatives[0]["claim_id"] for f in findings)
    assert result.verdict is not None and result.verdict["verdict"] == "PASS"


def _logs_not_checked(item: str) -> bool:
    """A missing-information item that says the logs could not be checked, and names no tool."""
    return ("日志" in item or "logs" in item) and "query_logs(" not in item and "=" not in item
