"""The answer check end to end over gRPC: a lying Composer behind a real OpenAI-compatible HTTP server
(tests/support/fake_openai.py). The Executor calls one real tool and cites it correctly, the Verifier
says PASS, and the Composer invents facts. Nothing it invents may reach the user — not in Chat, not
in StreamChat's events — and the session still ends with a correct answer from the allowed claims."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import text_format

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
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Responder, Step, json_reply

JSON = dict[str, Any]
ZH_QUESTION = "payment-service 现在有 HighCPUUsage 告警吗？"
EN_QUESTION = "Does payment-service have a HighCPUUsage alert right now?"
EN_CLAIM = "payment-service has a firing HighCPUUsage alert; CPU usage is 92%."

LIES: dict[str, dict[str, tuple[str, str]]] = {
    # lie → (the invented text, a token of it that must never reach the user)
    "zh": {
        "number": ("payment-service 的 CPU 使用率为 99%。", "99%"),
        "root_cause": ("payment-service 的 HighCPUUsage 告警正在触发，根因是内存泄漏。", "内存泄漏"),
        "ticket": ("payment-service 的 HighCPUUsage 告警正在触发，详见工单 OPS-4711。", "OPS-4711"),
        "pod": ("payment-service 的 HighCPUUsage 告警来自 pod payment-service-abc12。", "abc12"),
        "together": (
            "payment-service 的 CPU 使用率为 99%，根因是 PaymentController 的内存泄漏（工单 OPS-4711），"
            "请重启 pod payment-service-abc12。",
            "PaymentController",
        ),
    },
    "en": {
        "number": ("payment-service is at 99% CPU.", "99%"),
        "root_cause": (
            "payment-service has HighCPUUsage firing. The root cause is a memory leak.",
            "memory leak",
        ),
        "ticket": ("payment-service has HighCPUUsage firing, tracked in ticket OPS-4711.", "OPS-4711"),
        "pod": ("payment-service has HighCPUUsage firing on pod payment-service-abc12.", "abc12"),
        "together": (
            "payment-service CPU is at 99%. The root cause is a memory leak in PaymentController "
            "(ticket OPS-4711); restart pod payment-service-abc12.",
            "PaymentController",
        ),
    },
}


def _composed(answer: str) -> Responder:
    """The model's reply: `answer` as the text of the draft's first slot (the headline)."""
    return json_reply({"sentences": [s.slot_text(1, answer)]})


def _fell_back(trace: Any) -> str:
    """The one fallback note of the Composer (why code's draft is the answer)."""
    (note,) = [n.detail for n in trace.stage_notes if n.stage == "composer" and n.kind == "offline_fallback"]
    return str(note)


async def _chat(
    app_factory: AppFactory, agents: AgentBackend, query: str, language: str
) -> tuple[Any, Any, App]:
    app = await app_factory(agents=agents)
    async with grpc.aio.insecure_channel(app.address) as channel:
        reply = await chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
            chat_service_pb2.ChatRequest(query=query, language=language), timeout=60
        )
        trace = (
            await trace_service_pb2_grpc.TraceServiceStub(channel).GetTrace(
                trace_service_pb2.GetTraceRequest(session_id=reply.session_id), timeout=10
            )
        ).trace
    return reply, trace, app


def _executor(script: s.StageScript, language: str) -> None:
    claim = s.CPU_CLAIM if language == "zh" else EN_CLAIM
    script.add("executor", [s.call(), s.cite(claim_text=claim)])


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("lie", ["number", "root_cause", "ticket", "pod", "together"])
async def test_a_lying_composer_never_reaches_the_user(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, language: str, lie: str
) -> None:
    text, token = LIES[language][lie]
    _executor(script, language)
    script.add("composer", [_composed(text)])
    question = ZH_QUESTION if language == "zh" else EN_QUESTION
    reply, trace, app = await _chat(app_factory, agents, question, language)

    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS  # the verdict does not rise or fall
    shown = f"{reply.answer} {reply.composer_output.answer_summary}"
    assert token not in shown and text not in shown
    # code's draft from the allowed claim: every sentence bound to it or a fixed line
    assert "92%" in reply.answer and reply.answer_sentences
    assert all(list(x.claim_ids) == ["claim-1"] or x.fixed_line for x in reply.answer_sentences)
    assert trace.answer_source == "offline_fallback" and not trace.answer_check_rejections
    assert trace.session.answer == reply.answer
    assert trace.rounds[-1].verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS
    # the refused slot and its rules: in the trace's notes (`evigate trace` shows them), counted once
    why = _fell_back(trace)
    assert why.startswith("unusable_output: the model wrote 0 of") and "refused: slot 1 (" in why
    assert why in render.trace(trace)
    rules = why.split("refused: slot 1 (", 1)[1].split(")", 1)[0].split(", ")
    for rule in rules:
        counted = app.metrics.registry.get_sample_value("evigate_refused_sentences_total", {"rule": rule})
        assert counted == 1, rule


PARAPHRASES = {
    "en": "Yes: payment-service has had a HighCPUUsage alert firing for 25m, with CPU at 92 %.",
    "zh": "是的，ＰＡＹＭＥＮＴ-SERVICE 的 HighCPUUsage 告警已触发 25m，CPU 使用率百分之九十二（0.92）。",
}


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_valid_paraphrase_passes_unchanged(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, fake: FakeOpenAI, language: str
) -> None:
    _executor(script, language)
    headline = PARAPHRASES[language]
    script.add("composer", [_composed(headline)])
    question = ZH_QUESTION if language == "zh" else EN_QUESTION
    reply, trace, _app = await _chat(app_factory, agents, question, language)

    assert reply.answer.splitlines()[0] == f"{headline} [1]"  # as written, with its marker
    assert reply.composer_output.answer_summary == headline
    assert trace.answer_source == "composer" and not trace.answer_check_rejections
    assert len([r for r in fake.requests if r.model == "composer"]) == 1


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        ("<the answer, in the user's language>", "answer.placeholder"),
        ("payment-service: <one-sentence summary>", "answer.placeholder"),
        ("Say what the draft says, and only that.", "answer.prompt_echo"),
        ("Reply with one json object and nothing else.", "answer.prompt_echo"),
        ("", "no text for any slot"),
        ("  ", "no text for any slot"),
    ],
    ids=["placeholder", "placeholder-in-text", "instruction-echo", "format-echo", "empty", "blank"],
)
async def test_placeholder_instruction_echo_and_empty_answers_are_refused(  # noqa: PLR0917 - fixtures and parameters
    app_factory: AppFactory,
    agents: AgentBackend,
    script: s.StageScript,
    answer: str,
    rule: str,
    language: str,
) -> None:
    _executor(script, language)
    script.add("composer", [_composed(answer)])
    question = ZH_QUESTION if language == "zh" else EN_QUESTION
    reply, trace, _app = await _chat(app_factory, agents, question, language)

    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert "HighCPUUsage" in reply.answer and "92%" in reply.answer  # code's draft from the claim
    if answer.strip():
        assert answer not in reply.answer and answer not in reply.composer_output.answer_summary
    assert trace.answer_source == "offline_fallback"
    assert rule in _fell_back(trace)


INVENTED = {
    "zh": ("99%", "内存泄漏", "PaymentController", "OPS-4711", "abc12"),
    "en": ("99%", "memory leak", "PaymentController", "OPS-4711", "abc12"),
}


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("lie", ["number", "root_cause", "ticket", "pod", "together"])
async def test_stream_chat_never_emits_the_rejected_text(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, language: str, lie: str
) -> None:
    text, _token = LIES[language][lie]
    _executor(script, language)
    script.add("composer", [_composed(text)])
    app = await app_factory(agents=agents)
    events: list[chat_service_pb2.StreamChatResponse] = []
    question = ZH_QUESTION if language == "zh" else EN_QUESTION
    async with grpc.aio.insecure_channel(app.address) as channel:
        stream = chat_service_pb2_grpc.ChatServiceStub(channel).StreamChat(
            chat_service_pb2.StreamChatRequest(query=question, language=language), timeout=60
        )
        async for event in stream:
            events.append(event)
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds.count("composer_output") == 1 and kinds[-1] == "result"
    for event in events:  # every field of every event, Chinese as written (not octal escapes)
        shown = text_format.MessageToString(event, as_utf8=True)
        assert text not in shown
        assert not [token for token in INVENTED[language] if token in shown], (lie, shown)
    composed = next(e.composer_output for e in events if e.WhichOneof("event") == "composer_output")
    assert "HighCPUUsage" in composed.user_facing_answer and "92%" in composed.user_facing_answer
    assert events[-1].result.answer == composed.user_facing_answer
    assert events[-1].result.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS


def _unsure_verifier(request: RecordedRequest) -> Step:
    """Supports every claim, but only with LOW_CONFID."""
    claims = s.payload(request).get("executor_structured_output", {}).get("claims") or []
    ids = [c.get("claim_id", "") for c in claims if isinstance(c, dict)]
    checks = [{"claim_id": i, "supported": True, "reason": "partial", "unsupported_facts": []} for i in ids]
    return json_reply(
        {
            "verdict": "LOW_CONFID",
            "groundedness_score": 0.6,
            "critical_fact_count": len(ids),
            "claim_checks": checks,
            "facts_checked": [],
            "rationale": "one signal only",
        }
    )


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_a_refused_answer_never_raises_the_verdict(
    app_factory: AppFactory, agents: AgentBackend, script: s.StageScript, language: str
) -> None:
    """A LOW_CONFID session whose Composer lies ends LOW_CONFID, answered by code with the
    low-confidence notice, never PASS."""
    text, token = LIES[language]["together"]
    _executor(script, language)
    script.add("verifier", [_unsure_verifier])
    script.add("composer", [_composed(text)])
    question = ZH_QUESTION if language == "zh" else EN_QUESTION
    reply, trace, _app = await _chat(app_factory, agents, question, language)

    assert reply.status == session_pb2.SESSION_STATUS_SUCCESS, reply.failure_reason
    assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_LOW_CONFID
    assert trace.rounds[-1].verdict.verdict == verdict_pb2.VERDICT_LABEL_LOW_CONFID
    assert trace.answer_source == "offline_fallback" and token not in reply.answer
    assert ("证据不足" if language == "zh" else "The evidence is insufficient") in reply.answer
