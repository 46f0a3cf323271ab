"""A weak or flaky model still yields an honest answer (issue: the LLM path on a real model):
evidence first, stage fallbacks to the offline agents, answers composed by code when nothing is left
to write, replies read from code fences / trailing text / tool calls written as text. The real
`openai` client talks to FakeOpenAI on 127.0.0.1; tools, storage and pipeline are real."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from evigate.rules import answer_check
from evigate.server.agents.base import AgentBackend
from evigate.server.agents.mix import build_agents
from evigate.server.cli import render
from evigate.server.deadline import Deadline
from evigate.server.grpc import convert
from evigate.server.pipeline import ChatResult
from evigate.storage import Database
from evigate.storage.records import TraceRecord
from tests.pipeline.conftest import BuildPipeline
from tests.support import llm_script as s
from tests.support.fake_openai import Error, FakeOpenAI, RecordedRequest, Step, json_reply, reply

JSON = dict[str, Any]
HIGH_CPU = "payment-service 现在有 HighCPUUsage 告警吗？"
ALL_LLM = dict.fromkeys(("planner", "executor", "verifier", "composer"), "llm")
# what the old executor prompt's example made a small model write, with no tool call at all
PROMPT_EXAMPLE = json_reply(
    {
        "answer_version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "claim-1",
                "claim_type": "observation",
                "claim_text": s.CPU_CLAIM,
                "support_level": "direct",
                "evidence_bindings": [
                    {
                        "source_type": "tool_trace",
                        "source_id": "",
                        "tool_name": "query_metrics",
                        "source_invocation_id": 517,
                        "raw_path": "$.alerts[0]",
                        "evidence_excerpt": "HighCPUUsage, service=payment-service, current=92%",
                    }
                ],
            }
        ],
        "hypotheses": [],
        "recommended_actions": [],
        "missing_info": [],
    }
)
# Tests of the model's own plan set planner_anchor="none"; the default anchor has its own test.
PLANNED = {
    **s.PLAN,
    "tool_calls": [{"tool_name": "query_metrics", "arguments": s.HIGH_CPU_ARGS}],
}


@pytest.fixture
def db_backend() -> str:
    """SQLite only: what these tests check is the stages' behaviour, not storage (test_llm_pipeline
    runs the LLM path on both databases)."""
    return "sqlite"


async def _run(
    build_pipeline: BuildPipeline, agents: AgentBackend, db: Database, query: str = HIGH_CPU
) -> tuple[ChatResult, TraceRecord]:
    try:
        result = await build_pipeline(agents=agents).run(query, None, "zh", Deadline.after(20))
    finally:
        await agents.aclose()
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None
    return result, trace


def _notes(trace: TraceRecord) -> list[tuple[str, str]]:
    return [(n["stage"], n["kind"]) for n in (trace.session.extras or {}).get("stage_notes", [])]


def _stages(fake: FakeOpenAI) -> list[str]:
    return [r.model or "" for r in fake.requests]


async def test_planned_calls_run_before_the_model_and_a_quoted_ref_is_real_evidence(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("planner", [json_reply(PLANNED)]).add("executor", [s.cite_first_ref])
    result, trace = await _run(
        build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url, planner_anchor="none")), db
    )

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    [executor] = [r for r in fake.requests if r.model == "executor"]
    refs = s.listing(executor)["citable_refs"]
    # the call ran before the model's first turn, and the prompt lists its refs with ids and paths
    assert [i.tool_name for i in trace.invocations] == ["query_metrics"]
    assert refs and {r["source_invocation_id"] for r in refs} == {trace.invocations[0].id}
    assert all(r["raw_path"].startswith("$.") for r in refs)
    out = convert.trace(trace)
    assert dict(out.stage_backends) == ALL_LLM
    assert out.planner_plan.tool_calls[0].tool_name == "query_metrics"


async def test_where_code_reads_the_plan_and_finds_the_evidence_the_model_only_verifies_and_composes(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    """The default, code first: the question names its service and alert, code's exact call finds
    the alert, so code plans and quotes it, and its check passes its claim (each noted `by_code`,
    none a fallback): the model is asked to compose only."""
    settings = s.settings(fake.base_url, planner_anchor="offline")
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, settings), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    assert _stages(fake) == ["composer"]
    call = trace.invocations[0]
    assert (call.tool_name, call.arguments) == (
        "query_metrics",
        {"service": "payment-service", "alert_name": "HighCPUUsage"},
    )
    [binding] = trace.rounds[0].executor_output["claims"][0]["evidence_bindings"]  # type: ignore[index]
    assert binding["source_invocation_id"] in {i.id for i in trace.invocations}
    notes = _notes(trace)
    assert {("planner", "by_code"), ("executor", "by_code"), ("verifier", "by_code")} <= set(notes)
    assert not [n for n in notes if n[1] == "offline_fallback"]
    assert (trace.session.extras or {})["answer_check"]["answer_source"] == "composer"


def _placeholder_claim(request: RecordedRequest) -> Step:
    """A weak model: the example's real binding, with the prompt's placeholder as its claim text."""
    example = json.loads(s.cite_first_ref(request).content or "")  # type: ignore[union-attr]
    example["claims"][0]["claim_text"] = "<what the cited ref text says, in the task's language>"
    return json_reply(example)


@pytest.mark.parametrize("retry", ["offline", "llm"])
async def test_a_placeholder_claim_text_never_reaches_the_answer(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript, retry: str
) -> None:
    """Its binding is real, so the Gatekeeper passes it; the code check under the Verifier refuses
    the placeholder, so no Composer (the model's or the offline fallback) may state it. The retry
    round is the offline Executor's (the default): its claims pass; or the model's again: REJECT."""
    script.add("planner", [json_reply(PLANNED)]).add("executor", [_placeholder_claim] * 2)
    settings = s.settings(fake.base_url, executor_retry=retry, planner_anchor="none")
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, settings), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert [(r.verdict or {}).get("verdict") for r in trace.rounds] == (
        ["REJECT", "PASS"] if retry == "offline" else ["REJECT", "REJECT"]
    )
    assert "<what the cited ref" not in result.answer
    assert not answer_check.placeholders(result.answer)
    retried_offline = [n for n in convert.trace(trace).stage_notes if n.kind == "offline_fallback"]
    if retry == "offline":
        assert [(n.stage, n.round) for n in retried_offline] == [("executor", 2)]
        assert "rejected in the round before" in retried_offline[0].detail
    else:
        assert not retried_offline


async def test_claims_before_any_tool_call_are_not_accepted(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [PROMPT_EXAMPLE, s.call(), s.cite()])
    result, trace = await _run(
        build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url, planner_anchor="none")), db
    )

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    executor = [r for r in fake.requests if r.model == "executor"]
    assert executor[0].body.get("tool_choice") is None
    assert executor[1].body.get("tool_choice") == "required"  # the turn repeated, forcing a call
    assert "No tool of this session has run" in executor[1].messages[-1]["content"]
    (binding,) = trace.rounds[0].executor_output["claims"][0]["evidence_bindings"]  # type: ignore[index]
    assert binding["source_invocation_id"] == trace.invocations[0].id != 517
    assert ("executor", "tool_call_forced") in _notes(trace)


async def test_a_model_that_never_calls_a_tool_runs_the_executor_offline(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [PROMPT_EXAMPLE, PROMPT_EXAMPLE] * 2)
    result, trace = await _run(
        build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url, planner_anchor="none")), db
    )

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"  # the offline Executor's claims, verified
    assert ("executor", "offline_fallback") in _notes(trace)
    assert [i.tool_name for i in trace.invocations] == ["query_metrics"]
    assert "取证（executor）：模型输出不可用" in result.answer  # the answer says which stage ran offline
    notes = [n for n in convert.trace(trace).stage_notes if n.kind == "offline_fallback"]
    assert notes and notes[0].stage == "executor" and notes[0].detail.startswith("unusable_output")


async def test_prose_instead_of_claims_runs_the_executor_offline_over_the_same_calls(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    """A weak model that gathers evidence, then answers in prose twice (the repeat asks for the
    JSON object): the offline Executor writes the claims, citing this session's calls."""
    script.add("executor", [s.call(), reply("The service looks fine to me."), reply("All good.")])
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url)), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"  # offline claims over the model's call, verified
    ids = {i.id for i in trace.invocations}
    claims = trace.rounds[-1].executor_output["claims"]  # type: ignore[index]
    assert claims and all(b["source_invocation_id"] in ids for c in claims for b in c["evidence_bindings"])
    notes = [n for n in convert.trace(trace).stage_notes if n.kind == "offline_fallback"]
    assert notes and notes[0].stage == "executor"
    assert notes[0].detail.startswith("unusable_output") and "no JSON object" in notes[0].detail


async def test_prose_instead_of_claims_with_fallback_fail_is_a_reject(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), reply("fine"), reply("fine")] * 2)
    settings = s.settings(fake.base_url, executor_fallback="fail")
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, settings), db)
    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "REJECT"  # the Gatekeeper judged the unparseable text
    assert not [n for n in convert.trace(trace).stage_notes if n.kind == "offline_fallback"]


async def test_fallback_fail_keeps_the_old_behaviour(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [PROMPT_EXAMPLE, PROMPT_EXAMPLE])
    settings = s.settings(fake.base_url, executor_fallback="fail", planner_anchor="none")
    result, _ = await _run(build_pipeline, build_agents(ALL_LLM, settings), db)
    assert result.status == "FAILED"
    assert "no tool call" in result.failure_reason


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_endpoint_down_every_stage_runs_offline(db: Database, build_pipeline: BuildPipeline) -> None:
    settings = s.settings(f"http://127.0.0.1:{_closed_port()}/v1", max_retries=0)
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, settings), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    fallbacks = [stage for stage, kind in _notes(trace) if kind == "offline_fallback"]
    assert fallbacks == ["planner", "executor", "verifier", "composer"]
    assert "模型端点不可用" in result.answer
    shown = render.trace(convert.trace(trace))  # what `evigate trace` prints
    assert "stage notes:" in shown and "executor (round 1): offline_fallback — endpoint_unavailable" in shown


async def test_a_request_too_long_for_the_model_s_context_is_said_as_refused(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    """llama.cpp answers a prompt past its context with a 400: the stage runs offline, and the
    answer says the endpoint refused the request, not that it was down."""
    too_long = Error(400, "This model's maximum context length is 8192 tokens.")
    script.add("planner", [json_reply(PLANNED)]).add("executor", [too_long])
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url)), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    [note] = [n for n in convert.trace(trace).stage_notes if n.kind == "offline_fallback"]
    assert note.stage == "executor" and note.detail.startswith("endpoint_refused")
    assert "取证（executor）：模型端点拒绝了请求" in result.answer


async def test_offline_planner_and_executor_with_llm_verifier_and_composer(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI
) -> None:
    backends = {"planner": "offline", "executor": "offline", "verifier": "llm", "composer": "llm"}
    result, trace = await _run(build_pipeline, build_agents(backends, s.settings(fake.base_url)), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    assert _stages(fake) == ["verifier", "composer"]
    meta = trace.session.meta or {}
    assert meta["agent_backend"] == "mixed" and meta["stage_backends"] == backends
    assert _notes(trace) == [("composer", "composer_slots")]  # who wrote the sentences, no fallback


async def test_no_allowed_claim_is_composed_by_code_without_the_model(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    # a citation to an invocation that does not exist: REJECT in both rounds, nothing allowed
    forged = s.cite(invocation_id=lambda real: real + 1000)
    script.add("executor", [s.call(), forged, s.call(), forged])
    settings = s.settings(fake.base_url, executor_retry="llm")  # the model writes the retry too
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, settings), db)

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "REJECT"
    assert "composer" not in _stages(fake)
    assert (trace.session.extras or {})["answer_check"]["answer_source"] == "composed_by_code"
    assert "没有通过校验的证据" in result.answer


@pytest.mark.parametrize("bad", ["", "<the answer, in the user's language>"])
async def test_empty_or_placeholder_composer_output_never_reaches_the_user(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript, bad: str
) -> None:
    output = {"answer_summary": bad, "recommended_actions": [], "user_facing_answer": bad}
    script.add("executor", [s.call(), s.cite()]).add("composer", [json_reply(output)] * 2)
    result, trace = await _run(build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url)), db)

    assert result.status == "SUCCESS"
    assert bad not in result.answer.splitlines() and result.answer.strip()
    assert "HighCPUUsage" in result.answer and "92%" in result.answer  # written by code from the claim
    assert (trace.session.extras or {})["answer_check"]["answer_source"] == "offline_fallback"
    assert ("composer", "offline_fallback") in _notes(trace)
    assert "回答撰写（composer）：模型输出不可用" in result.answer


async def test_replies_in_code_fences_and_tool_calls_as_text_are_read_and_recorded(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    text_call = (
        '<tool_call>\n{"name": "query_metrics", "arguments": '
        + json.dumps(s.HIGH_CPU_ARGS)
        + "}\n</tool_call>"
    )
    script.add("planner", [reply("```json\n" + json.dumps(s.PLAN) + "\n```\nThat is the plan.")])
    script.add("executor", [reply(text_call), s.cite()])
    result, trace = await _run(
        build_pipeline, build_agents(ALL_LLM, s.settings(fake.base_url, planner_anchor="none")), db
    )

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    assert [i.tool_name for i in trace.invocations] == ["query_metrics"]
    notes = _notes(trace)
    assert ("planner", "json_in_code_fence") in notes
    assert ("executor", "tool_call_in_text") in notes
    # the call goes back to the endpoint as an assistant turn whose content is a string: llama.cpp's
    # server answers a null content with HTTP 500
    turns = [
        m for r in fake.requests for m in r.messages if m.get("role") == "assistant" and m.get("tool_calls")
    ]
    assert turns and all(isinstance(m["content"], str) for m in turns)


async def test_where_code_s_call_finds_nothing_the_model_may_resolve_the_name_and_its_claims_count(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    """Code first: code takes a misspelt service as written and its exact call finds nothing, so the
    model is asked; it resolves the name with list_services, queries the service found, and its own
    claim (no fallback, no hand-over to code) passes the Gatekeeper and the Verifier."""
    alert = {"service": "payment-service", "alert_name": "HighCPUUsage"}
    script.add(
        "executor",
        [s.call("list_services", {"name": "payments-svc"}), s.call("query_metrics", alert), s.cite()],
    )
    settings = s.settings(fake.base_url, planner_anchor="offline")
    result, trace = await _run(
        build_pipeline, build_agents(ALL_LLM, settings), db, "payments-svc 现在有 HighCPUUsage 告警吗？"
    )

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    notes = _notes(trace)
    assert ("planner", "by_code") in notes and ("executor", "model_asked") in notes
    assert ("executor", "by_code") not in notes
    assert not [n for n in notes if n[1] == "offline_fallback"]
    assert [i.tool_name for i in trace.invocations] == ["query_metrics", "list_services", "query_metrics"]
    [binding] = trace.rounds[0].executor_output["claims"][0]["evidence_bindings"]  # type: ignore[index]
    assert binding["source_invocation_id"] == trace.invocations[2].id


async def test_an_answer_of_absences_only_is_composed_by_code_without_the_model(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI
) -> None:
    """Every allowed claim says a query found nothing: each sentence has the one wording the
    contract fixes, so code writes the answer and the Composer model is not asked (noted)."""
    backends = {"planner": "offline", "executor": "offline", "verifier": "llm", "composer": "llm"}
    agents = build_agents(backends, s.settings(fake.base_url))
    result, trace = await _run(
        build_pipeline, agents, db, "inventory-service 有 HikariCP 连接池耗尽的日志吗？"
    )

    assert result.status == "SUCCESS" and result.verdict is not None
    claims = trace.rounds[-1].executor_output["claims"]  # type: ignore[index]
    assert claims and {c["claim_type"] for c in claims} == {"negative_observation"}
    assert "composer" not in _stages(fake)
    assert (trace.session.extras or {})["answer_check"]["answer_source"] == "composed_by_code"
    [note] = [n for n in (trace.session.extras or {})["stage_notes"] if n["stage"] == "composer"]
    assert note["kind"] == "by_code" and "found nothing" in note["detail"]
    assert "当前查询未检索到 inventory-service 的 HikariCP" in result.answer


NONSENSE = "Monitoring is a journey rather than a destination, and every service has its seasons."


def _nonsense_for_every_slot(request: RecordedRequest) -> Step:
    return json_reply({"sentences": [s.slot_text(slot["slot"], NONSENSE) for slot in s.slots(request)]})


async def test_nonsense_in_the_reply_s_shape_earns_the_model_no_sentence(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI
) -> None:
    """A null model that keeps the reply's shape: every slot text passes the token check (it states
    no number, name or cause) but carries none of its slot's facts, so each is refused and the
    answer is code's draft, in one Composer request."""
    fake.default = _nonsense_for_every_slot
    backends = {"planner": "offline", "executor": "offline", "verifier": "offline", "composer": "llm"}
    result, trace = await _run(build_pipeline, build_agents(backends, s.settings(fake.base_url)), db)

    assert result.status == "SUCCESS" and NONSENSE not in result.answer
    assert _stages(fake) == ["composer"]
    check = (trace.session.extras or {})["answer_check"]
    assert check["answer_source"] == "offline_fallback"
    assert check["slots"]["slots"] > 0 and check["slots"]["model_sentences"] == 0
    assert all("slot.facts@1" in refused["rules"] for refused in check["slots"]["refused_slots"])
    assert ("composer", "offline_fallback") in _notes(trace)
