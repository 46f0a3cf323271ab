"""The LLM Composer's sentences checked one by one, end to end over gRPC, behind a real
OpenAI-compatible HTTP server (tests/support/fake_openai.py).

The Executor cites one real alert (payment-service's firing HighCPUUsage, CPU 92%), the Verifier
says PASS. The model's slot text that adds no new number or identifier but says something false (a flipped
state, an invented cause, an invented action) is refused by its rule, code's draft standing for
that slot, recorded as a fallback, with no second request. A faithful text is shown as written."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from evigate.server.agents.base import AgentBackend
from evigate.server.app import App
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
    verdict_pb2,
)
from tests.server.conftest import AppFactory
from tests.support import llm_script as s
from tests.support.fake_openai import FakeOpenAI, json_reply

JSON = dict[str, Any]
QUESTION = {
    "zh": "payment-service 现在有 HighCPUUsage 告警吗？",
    "en": "Does payment-service have a HighCPUUsage alert right now?",
}
CLAIM = {"zh": s.CPU_CLAIM, "en": "payment-service has a firing HighCPUUsage alert; CPU usage is 92%."}
HEADLINE = {
    "zh": "是的，payment-service 的 HighCPUUsage 告警已触发 25m，CPU 使用率为 92%。",
    "en": "Yes: payment-service has had a HighCPUUsage alert firing for 25m, with CPU at 92%.",
}
# false sentences that add no number or identifier the session lacks → the rule that refuses each
FALSE: dict[str, dict[str, tuple[str, str]]] = {
    "zh": {
        "flipped_state": ("payment-service 的 HighCPUUsage 告警已经恢复。", "sentence.state@2"),
        "negation": ("payment-service 的 HighCPUUsage 告警没有在触发。", "sentence.state@2"),
        "invented_cause": ("由于流量激增，payment-service 的 CPU 使用率为 92%。", "sentence.causal@2"),
        "other_service": ("order-service 的 CPU 使用率为 92%。", "sentence.subject@3"),
        "invented_action": ("请回滚 payment-service 的最近一次发布。", "sentence.action@2"),
    },
    "en": {
        "flipped_state": ("The HighCPUUsage alert on payment-service has resolved.", "sentence.state@2"),
        "negation": ("payment-service's HighCPUUsage alert is not firing.", "sentence.state@2"),
        "invented_cause": (
            "payment-service's CPU is at 92% because of a traffic spike.",
            "sentence.causal@2",
        ),
        "other_service": ("order-service's CPU usage is 92%.", "sentence.subject@3"),
        "invented_action": ("Roll back the last deploy of payment-service.", "sentence.action@2"),
    },
}


async def _chat(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, language: str
) -> tuple[chat_service_pb2.ChatResponse, session_pb2.Trace, App]:
    script.add("executor", [s.call(), s.cite(claim_text=CLAIM[language])])
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        reply = await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(query=QUESTION[language], language=language), timeout=60
        )
        trace = (
            await trace_service_pb2_grpc.TraceServiceStub(channel).GetTrace(
                trace_service_pb2.GetTraceRequest(session_id=reply.session_id), timeout=10
            )
        ).trace
    return reply, trace, app


def _slot(text: str) -> JSON:
    """The model's reply: `text` for the draft's first slot (the headline)."""
    return {"sentences": [s.slot_text(1, text)]}


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("name", ["flipped_state", "invented_cause", "invented_action"])
async def test_a_false_slot_text_is_refused_by_its_rule_and_code_s_draft_stands(  # noqa: PLR0917 - fixtures and parameters
    app_factory: AppFactory,
    agents: AgentBackend,
    script: s.StageScript,
    fake: FakeOpenAI,
    language: str,
    name: str,
) -> None:
    text, rule = FALSE[language][name]
    script.add("composer", [json_reply(_slot(text))])
    reply, trace, app = await _chat(app_factory, agents, script, language)

    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS
    assert text not in reply.answer and "92%" in reply.answer
    assert all(x.claim_ids or x.fixed_line for x in reply.answer_sentences)
    # code's draft, recorded as a fallback and never as the model's; no retry
    assert trace.answer_source == "offline_fallback" and not trace.answer_check_rejections
    assert len([r for r in fake.requests if r.model == "composer"]) == 1
    notes = [n.detail for n in trace.stage_notes if n.stage == "composer" and n.kind == "offline_fallback"]
    assert len(notes) == 1 and rule in notes[0] and "slot 1" in notes[0], notes
    counted = app.metrics.registry.get_sample_value("evigate_refused_sentences_total", {"rule": rule})
    assert counted == 1, rule


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_faithful_slot_text_is_shown_as_written(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, fake: FakeOpenAI, language: str
) -> None:
    script.add("composer", [json_reply(_slot(HEADLINE[language]))])
    reply, trace, app = await _chat(app_factory, agents, script, language)

    assert reply.answer.splitlines()[0] == f"{HEADLINE[language]} [1]"
    assert (reply.answer_sentences[0].text, list(reply.answer_sentences[0].claim_ids)) == (
        HEADLINE[language],
        ["claim-1"],
    )
    assert not any(x.violations for x in reply.answer_sentences)
    assert reply.language == language
    assert trace.answer_source == "composer" and not trace.answer_check_rejections
    assert len([r for r in fake.requests if r.model == "composer"]) == 1
    (note,) = [n for n in trace.stage_notes if n.stage == "composer"]
    assert note.kind == "composer_slots" and note.detail.startswith("the model wrote 1 of 1")
    assert (
        app.metrics.registry.get_sample_value("evigate_refused_sentences_total", {"rule": "sentence.state@2"})
        is None
    )
