"""The pipeline on the llm backend: the real `openai` client over HTTP against FakeOpenAI on
127.0.0.1, with the real fixture tools on the demo world and the real storage (SQLite and MariaDB).
Executor replies cite the invocation ids the model really received (tests/support/llm_script.py);
the Verifier is credulous, so every REJECT below comes from the code-enforced constraints."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from evigate.rules import guard
from evigate.server.agents.base import AgentBackend
from evigate.server.agents.llm import build_llm_backend
from evigate.server.codec import from_seed
from evigate.server.deadline import Deadline
from evigate.server.pipeline import ChatResult, material
from evigate.storage import Database
from evigate.storage.records import TraceRecord
from evigate.v1 import verdict_pb2
from tests.pipeline.conftest import BuildPipeline
from tests.support import llm_script as s
from tests.support.fake_openai import Error, FakeOpenAI, Hang, RecordedRequest, json_reply, reply

JSON = dict[str, Any]
HIGH_CPU = "payment-service 现在有 HighCPUUsage 告警吗？"
HIKARI_NEGATIVE = "inventory-service 有 HikariCP 连接池耗尽的日志吗？"


async def _run(
    build_pipeline: BuildPipeline,
    agents: AgentBackend,
    db: Database,
    query: str = HIGH_CPU,
    *,
    max_rounds: int = 2,
    seconds: float = 20,
) -> tuple[ChatResult, TraceRecord]:
    result = await build_pipeline(agents=agents, max_rounds=max_rounds).run(
        query, None, "zh", Deadline.after(seconds)
    )
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None
    return result, trace


def _by_stage(fake: FakeOpenAI, stage: str) -> list[RecordedRequest]:
    return [r for r in fake.requests if r.model == stage]


async def test_passing_session(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite()])
    result, trace = await _run(build_pipeline, agents, db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    # code's draft as the scripted model reworded it, every name and value kept, its marker added
    assert result.answer == f"{s.reworded(s.CPU_DRAFT)} [1]"
    (binding,) = trace.rounds[0].executor_output["claims"][0]["evidence_bindings"]  # type: ignore[index]
    assert binding["source_invocation_id"] == trace.invocations[0].id
    assert trace.session.meta is not None and trace.session.meta["agent_backend"] == "llm"
    assert trace.session.extras is not None
    assert trace.session.extras["prompt_versions"] == {
        "planner": "planner-v7",
        "executor": "executor-v6",
        "verifier": "verifier-v3",
        "composer": "composer-v7",
    }
    assert [r.model for r in fake.requests] == ["planner", "executor", "executor", "verifier", "composer"]


async def test_forged_invocation_id_is_rejected_then_the_retry_passes(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite(invocation_id=lambda real: real + 1000), s.call(), s.cite()])
    result, trace = await _run(build_pipeline, agents, db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    first, second = trace.rounds
    assert first.verdict is not None and first.verdict["verdict"] == "REJECT"
    assert (
        first.proposed_verdict == "PASS" and "gatekeeper severity is reject" in first.verdict_override_reason
    )
    assert first.gatekeeper_result is not None
    assert first.gatekeeper_result["failed_rules"] == ["citation.invocation_exists"]
    forged = trace.invocations[0].id + 1000
    assert first.executor_output["claims"][0]["evidence_bindings"][0]["source_invocation_id"] == forged  # type: ignore[index]

    context = second.retry_context
    assert context is not None and context["previous_round"] == 1
    assert "citation.invocation_exists" in context["failed_rules"]
    assert any(f"source_invocation_id={forged}" in e["message"] for e in context["errors"])
    round_2_request = _by_stage(fake, "executor")[2]
    assert s.payload(round_2_request)["task"]["retry_context"] == context  # the model was told
    assert second.verdict is not None and second.verdict["verdict"] == "PASS"
    # the retry repeated the call: a deduped row of its own, which the model cited
    assert [i.retrieval_details["evidence_status"] for i in trace.invocations] == ["supported", "deduped"]
    cited = second.executor_output["claims"][0]["evidence_bindings"][0]  # type: ignore[index]
    assert cited["source_invocation_id"] == trace.invocations[1].id

    evaluation = trace.session.self_evaluation
    assert evaluation is not None
    assert [r["round"] for r in evaluation["verifier_evaluation_rounds"]] == [1, 2]
    assert [r["verdict"] for r in evaluation["verifier_evaluation_rounds"]] == ["REJECT", "PASS"]
    assert evaluation["verifier_evaluation"]["round"] == 2
    # everything persisted fits the contract's typed view (the gRPC trace decodes it)
    from_seed(verdict_pb2.RetryContext, context)
    for stored in evaluation["verifier_evaluation_rounds"]:
        from_seed(verdict_pb2.VerifierEvaluation, stored)
    assert [r.model for r in fake.requests].count("verifier") == 2


async def test_field_sub_path_citation_is_rejected(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite(raw_path="$.alerts[0].state", excerpt=lambda _: "state=firing")])
    result, trace = await _run(build_pipeline, agents, db, max_rounds=1)

    assert result.verdict is not None and result.verdict["verdict"] == "REJECT"
    gate = trace.rounds[0].gatekeeper_result
    assert gate is not None and gate["severity"] == "reject"
    assert any("raw_path" in rule for rule in gate["failed_rules"]), gate["failed_rules"]
    assert "92%" not in result.answer and "firing" not in result.answer


async def test_malformed_json_is_invalid_and_never_passes(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, script: s.StageScript
) -> None:
    broken = '{"answer_version": "executor_evidence_v2", "claims": [{"claim_id": "claim-1", "claim_type": '
    prose = reply("I think the CPU is high.")
    # each unparseable reply gets one repeat asking for the JSON object; round 2 calls again first
    script.add("executor", [s.call(), reply(broken), reply(broken), s.call(), prose, prose])
    result, trace = await _run(build_pipeline, agents, db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "REJECT"
    assert [r.parse_status["status"] for r in trace.rounds] == ["invalid", "invalid"]
    assert all(
        r.proposed_verdict == "PASS" for r in trace.rounds
    )  # the Verifier was fooled; the code was not
    assert trace.rounds[0].executor_raw_text == broken
    context = trace.rounds[1].retry_context
    assert context is not None and "contract.parse" in context["failed_rules"]
    evaluation = trace.session.self_evaluation
    assert evaluation is not None
    assert evaluation["verifier_evaluation"]["executor_output_parse_status"]["status"] == "invalid"
    assert "92%" not in result.answer


CLAIM_95 = "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 95%。"
BEYOND_SOURCE: dict[str, tuple[str, Callable[[str], str]]] = {
    "claim-95-excerpt-92": (CLAIM_95, s.first_fields),
    "claim-and-excerpt-95": (CLAIM_95, lambda text: s.first_fields(text).replace("92%", "95%")),
    "claim-adds-45-minutes": (s.CPU_CLAIM.replace("92%", "92%，持续 45 分钟"), s.first_fields),
}


@pytest.mark.parametrize("variant", BEYOND_SOURCE)
async def test_number_beyond_the_source_never_passes(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, script: s.StageScript, variant: str
) -> None:
    claim_text, excerpt_from = BEYOND_SOURCE[variant]
    script.add("executor", [s.call(), s.cite(claim_text=claim_text, excerpt=excerpt_from)])
    result, trace = await _run(build_pipeline, agents, db, max_rounds=1)

    assert result.verdict is not None and result.verdict["verdict"] != "PASS"
    assert "95%" not in result.answer and "45" not in result.answer
    (round_1,) = trace.rounds
    assert round_1.proposed_verdict == "PASS" and round_1.verdict_override_reason
    assert round_1.verdict is not None
    assert [c["supported"] for c in round_1.verdict["claim_checks"]] == [False]


async def test_a_composer_overstatement_never_reaches_the_answer(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    """The absence keeps code's one wording (it is not offered to the model); a model text saying
    the problem does not exist, for the slot it was offered, is refused and code's draft stands."""
    script.add(
        "executor",
        [
            s.call("query_logs", s.HIKARI_ARGS),
            # with a hypothesis, the Composer writes the answer (absences alone code writes)
            s.with_hypothesis(
                s.cite(
                    claim_type="negative_observation",
                    claim_text="当前查询未检索到 inventory-service 的 HikariCP 日志。",
                    excerpt=lambda text: text,
                ),
                "连接池配置可能需要检查",
            ),
        ],
    )
    script.add(
        "composer",
        [
            json_reply(
                {"sentences": [{"slot": 1, "text": "inventory-service 的 HikariCP 连接池问题不存在。"}]}
            )
        ],
    )
    result, trace = await _run(build_pipeline, agents, db, HIKARI_NEGATIVE)

    assert result.verdict is not None and result.verdict["verdict"] == "PASS"
    assert trace.invocations[0].retrieval_details["evidence_status"] == "no_evidence"
    (request,) = _by_stage(fake, "composer")
    assert [slot["kind"] for slot in s.payload(request)["slots"]] == ["hypothesis"]
    assert "问题不存在" not in result.answer
    assert result.answer.startswith("没有，当前查询未检索到 inventory-service 的 HikariCP 日志。")
    assert "- 连接池配置可能需要检查" in result.answer
    session = trace.session
    assert session.answer == result.answer
    slots = (session.extras or {})["answer_check"]["slots"]
    assert slots["model_sentences"] == 0 and slots["offered_slots"] == 1
    claims = trace.rounds[0].executor_output["claims"]  # type: ignore[index]
    assert guard.scan(result.answer, material.negative_claims(claims)) == []


async def test_429_then_success_is_retried(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("planner", [Error(429, "slow down", type="rate_limit_error"), json_reply(s.PLAN)])
    script.add("executor", [Error(503), s.call(), s.cite()])
    result, _ = await _run(build_pipeline, agents, db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    assert [r.outcome for r in _by_stage(fake, "planner")] == ["error 429", "reply"]
    assert [r.outcome for r in _by_stage(fake, "executor")] == ["error 503", "reply", "reply"]


async def test_hanging_endpoint_respects_the_deadline(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), Hang()])
    # Time for the planner and the first executor call on a loaded machine; then the hang.
    earliest_deadline = time.monotonic() + 4.0  # _run's deadline is no earlier than this
    result, trace = await _run(build_pipeline, agents, db, seconds=4.0)

    assert result.status == "FAILED"
    assert result.failure_reason == "deadline exceeded during executor (round 1)"
    session = trace.session
    assert session.status == "FAILED" and session.failure_reason == result.failure_reason
    assert session.planner_plan is not None and len(trace.invocations) == 1  # what ran is kept
    assert session.extras is not None and session.extras["failed_stage"] == "executor"
    hung = fake.requests[-1]
    assert hung.outcome == "hang"
    assert await asyncio.to_thread(hung.wait_disconnected, 10.0)  # the HTTP call was abandoned
    assert hung.disconnected_at is not None
    assert hung.disconnected_at >= earliest_deadline - 0.01  # at the deadline, not before it
    assert (await db.repo.job_stats()).pending == 0


async def test_cancellation_stops_the_llm_call(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [Hang()])
    pipeline = build_pipeline(agents=agents)
    task = asyncio.create_task(pipeline.run(HIGH_CPU, "cancel-llm", "zh", Deadline.after(30)))
    assert await asyncio.to_thread(fake.wait_for_requests, 2, 10.0)  # the executor's call is hanging
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    hung = fake.requests[-1]
    assert await asyncio.to_thread(hung.wait_disconnected, 2.0)
    session = await db.repo.get_session("cancel-llm")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason == "cancelled during executor (round 1)"


@pytest.mark.parametrize("db_backend", ["sqlite"], indirect=True)
async def test_pipeline_aclose_closes_the_llm_client(build_pipeline: BuildPipeline, fake: FakeOpenAI) -> None:
    backend = build_llm_backend(s.settings(fake.base_url))
    client = backend.planner._client  # type: ignore[attr-defined]
    assert not client._openai.is_closed()
    await build_pipeline(agents=backend).aclose()
    assert client._openai.is_closed()


async def test_overstating_claim_text_never_passes(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, script: s.StageScript
) -> None:
    script.add(
        "executor",
        [
            s.call("query_logs", s.HIKARI_ARGS),
            s.cite(
                claim_type="negative_observation",
                claim_text="inventory-service 的 HikariCP 连接池问题不存在。",
                excerpt=lambda text: text,
            ),
        ],
    )
    result, trace = await _run(build_pipeline, agents, db, HIKARI_NEGATIVE, max_rounds=1)

    assert result.verdict is not None and result.verdict["verdict"] == "REJECT"
    (round_1,) = trace.rounds
    assert round_1.gatekeeper_result is not None and round_1.gatekeeper_result["severity"] == "none"
    assert round_1.proposed_verdict == "PASS" and "over-statement" in round_1.verdict_override_reason
    assert "问题不存在" not in result.answer


async def test_an_over_stating_slot_text_is_refused_and_code_s_draft_stands(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, script: s.StageScript
) -> None:
    # the safe phrasing names the query, and this query itself reads as an over-statement
    script.add(
        "executor",
        [
            s.call("query_logs", {"service": "inventory-service", "keyword": "一切正常"}),
            s.with_hypothesis(
                s.cite(
                    claim_type="negative_observation",
                    claim_text="当前查询未检索到 inventory-service 的相关日志。",
                    excerpt=lambda text: text,
                ),
                "日志采集可能有延迟",
            ),
        ],
    )
    answer = {"sentences": [s.sentence("absence", "inventory-service 一切正常。", "claim-1")]}
    script.add("composer", [json_reply(answer)])
    result, trace = await _run(build_pipeline, agents, db, "inventory-service 一切正常吗？")
    # the model's text for the one slot (the hypothesis) over-states: refused alone, before the
    # guard ever sees it; code's draft is the answer, and the verdict stands
    assert result.verdict is not None and result.verdict["verdict"] == "PASS"
    assert trace.session.extras is not None
    check = trace.session.extras["answer_check"]
    assert check["answer_source"] == "offline_fallback" and check["slots"]["model_sentences"] == 0
    (refused,) = check["slots"]["refused_slots"]
    assert {"sentence.severity@2", "slot.facts@1"} <= set(refused["rules"])
    assert not trace.session.extras["answer_guard_findings"]
    assert "一切正常" not in result.answer and result.answer.strip()
