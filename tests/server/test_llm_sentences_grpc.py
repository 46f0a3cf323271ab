"""The LLM Composer's sentences checked one by one, end to end over gRPC, behind a real
OpenAI-compatible HTTP server (tests/support/fake_openai.py).

The Executor cites one real alert (payment-service's firing HighCPUUsage, CPU 92%), the Verifier
says PASS. The Composer's sentences that add no new number or identifier but say something false
(a flipped state, a negation, an invented cause, the value given to another service, an invented
action) are refused each by its rule; the retry is told which sentences and why; a retry that lies
again leaves the answer to the offline Composer, recorded as a fallback. A faithful answer is shown
as written."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from evigate.server.agents.base import AgentBackend
from evigate.server.app import App
from evigate.server.cli import render
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
    "zh": "是的，payment-service 的 HighCPUUsage 告警正在触发，CPU 使用率为 92%。",
    "en": "Yes: payment-service has a HighCPUUsage alert firing, with CPU at 92%.",
}
# false sentences that add no number or identifier the session lacks → the rule that refuses each
FALSE: dict[str, dict[str, tuple[str, str]]] = {
    "zh": {
        "flipped_state": ("payment-service 的 HighCPUUsage 告警已经恢复。", "sentence.state@2"),
        "negation": ("payment-service 的 HighCPUUsage 告警没有在触发。", "sentence.state@2"),
        "invented_cause": ("由于流量激增，payment-service 的 CPU 使用率为 92%。", "sentence.causal@2"),
        "other_service": ("order-service 的 CPU 使用率为 92%。", "sentence.subject@2"),
        "invented_action": ("请回滚 payment-service 的最近一次发布。", "sentence.action@2"),
    },
    "en": {
        "flipped_state": ("The HighCPUUsage alert on payment-service has resolved.", "sentence.state@2"),
        "negation": ("payment-service's HighCPUUsage alert is not firing.", "sentence.state@2"),
        "invented_cause": (
            "payment-service's CPU is at 92% because of a traffic spike.",
            "sentence.causal@2",
        ),
        "other_service": ("order-service's CPU usage is 92%.", "sentence.subject@2"),
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


def _answer(*false: str, language: str) -> JSON:
    """A faithful headline, then the false sentences, each bound to the session's claim."""
    sentences = [s.sentence("headline", HEADLINE[language], "claim-1")]
    sentences += [s.sentence("finding", FALSE[language][name][0], "claim-1") for name in false]
    return {"sentences": sentences}


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_false_sentences_are_refused_by_rule_the_retry_names_them_then_code_answers(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, fake: FakeOpenAI, language: str
) -> None:
    names = list(FALSE[language])
    script.add("composer", [json_reply(_answer(*names, language=language))] * 2)  # the retry lies again
    reply, trace, app = await _chat(app_factory, agents, script, language)

    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS
    # each false sentence refused by its rule, the faithful headline not
    first = trace.answer_check_rejections[0]
    refused: dict[str, set[str]] = {}
    for v in first.violations:
        refused.setdefault(v.field, set()).add(v.rule_id)
    assert "sentences[0]" not in refused
    for index, name in enumerate(names, start=1):
        assert FALSE[language][name][1] in refused[f"sentences[{index}]"], (name, refused)
    # the stored refusal keeps each sentence with its own refusals
    stored = first.composer_output.sentences
    assert [x.text for x in stored] == [HEADLINE[language], *(FALSE[language][n][0] for n in names)]
    assert not stored[0].violations and all(x.violations for x in stored[1:])
    # the retry is told each refused sentence and its rules, and which sentence passed
    retry = [r for r in fake.requests if r.model == "composer"][1]
    told = s.payload(retry)["answer_check"]
    assert [r["index"] for r in told["refused_sentences"]] == list(range(1, len(names) + 1))
    for item, name in zip(told["refused_sentences"], names, strict=True):
        text, rule = FALSE[language][name]
        assert item["text"] == text and rule in {r["rule_id"] for r in item["rules"]}
        assert all(r["meaning"] for r in item["rules"])
    assert [k["text"] for k in told["kept_sentences"]] == [HEADLINE[language]]
    # then the offline Composer writes the answer, recorded as a fallback and never as the model's
    assert trace.answer_source == "offline_fallback"
    assert [r.attempt for r in trace.answer_check_rejections] == [1, 2]
    assert any(n.stage == "composer" and n.kind == "offline_fallback" for n in trace.stage_notes)
    for name in names:
        assert FALSE[language][name][0] not in reply.answer
    assert "92%" in reply.answer and all(x.claim_ids or x.fixed_line for x in reply.answer_sentences)
    # metrics: each refused sentence once per rule it broke, over both attempts
    for name in ("flipped_state", "invented_cause", "other_service", "invented_action"):
        rule = FALSE[language][name][1]
        sentences = sum(rule in rules for rules in refused.values())
        counted = app.metrics.registry.get_sample_value("evigate_refused_sentences_total", {"rule": rule})
        assert counted == 2 * sentences, rule
    # `evigate trace`: each refused sentence with its rules, and where the answer came from
    shown = render.trace(trace)
    for name in names:
        text, rule = FALSE[language][name]
        line = next(line for line in shown.splitlines() if text in line)
        assert rule in line, line
    assert "answer source: offline_fallback" in shown


async def test_a_retry_that_drops_the_refused_sentences_is_shown(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript
) -> None:
    script.add(
        "composer",
        [json_reply(_answer("flipped_state", language="en")), json_reply(_answer(language="en"))],
    )
    reply, trace, _app = await _chat(app_factory, agents, script, "en")

    assert trace.answer_source == "composer_retry"
    assert reply.answer == f"{HEADLINE['en']} [1]"
    (rejection,) = trace.answer_check_rejections
    assert {v.rule_id for v in rejection.violations} >= {"sentence.state@2"}


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_faithful_answer_is_shown_as_written(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, fake: FakeOpenAI, language: str
) -> None:
    finding = {
        "zh": "payment-service 的 CPU 使用率为 92%。",
        "en": "payment-service's CPU usage is 92%.",
    }[language]
    said = [s.sentence("headline", HEADLINE[language], "claim-1"), s.sentence("finding", finding, "claim-1")]
    script.add("composer", [json_reply({"sentences": said})])
    reply, trace, app = await _chat(app_factory, agents, script, language)

    assert reply.answer == f"{HEADLINE[language]} [1]\n{finding} [1]"
    assert [(x.text, list(x.claim_ids)) for x in reply.answer_sentences] == [
        (HEADLINE[language], ["claim-1"]),
        (finding, ["claim-1"]),
    ]
    assert not any(x.violations for x in reply.answer_sentences)
    assert reply.language == language
    assert trace.answer_source == "composer" and not trace.answer_check_rejections
    assert len([r for r in fake.requests if r.model == "composer"]) == 1
    assert (
        app.metrics.registry.get_sample_value("evigate_refused_sentences_total", {"rule": "sentence.state@2"})
        is None
    )
