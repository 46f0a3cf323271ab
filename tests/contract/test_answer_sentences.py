"""The structured answer on the wire: the sentence check's seed shape is the contract's
AnswerSentence, its kinds are the contract's words, and the sentences and the answer's language
reach the Chat response, StreamChat's composer event and the trace through the codec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import ClaimFacts, Excerpt, Sentence, SentenceMaterial
from evigate.server.codec import CodecError, from_seed, to_seed
from evigate.server.codec.descriptors import enum_word
from evigate.server.grpc import convert
from evigate.server.pipeline.events import ChatResult, StageEvent
from evigate.v1 import session_pb2, verdict_pb2

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
ALERT = "HighErrorRate, service=order-service, state=firing, current=7.8%, threshold=5%, severity=critical"
CLAIM = ClaimFacts(
    "claim-1",
    "observation",
    "order-service 的 HighErrorRate 告警正在触发。",
    (Excerpt(ALERT, ALERT, "query_metrics", "$.alerts[0]"),),
)
MATERIAL = SentenceMaterial(
    claims=(CLAIM,), catalog=("order-service",), question="order-service 怎么了？", language="zh"
)
SENTENCES = [
    Sentence("headline", "order-service 的 HighErrorRate 告警正在触发，错误率 7.8%，阈值 5%。", ("claim-1",)),
    Sentence("note", "缺少的信息：", fixed_line="missing_header"),
    Sentence("finding", "HighErrorRate 告警已经恢复。", ("claim-1",)),
]


def _composer_output() -> dict[str, Any]:
    result = check(SENTENCES, MATERIAL)
    return {
        "answer_summary": SENTENCES[0].text,
        "recommended_actions": [],
        "user_facing_answer": "\n".join(s.text for s in SENTENCES),
        "sentences": result.annotated(SENTENCES),
        "language": "zh",
    }


def test_the_sentence_kinds_are_the_contracts_words() -> None:
    enum = verdict_pb2.AnswerSentenceKind.DESCRIPTOR
    words = {enum_word(enum, v.number) for v in enum.values if v.number}
    assert words == {k.value for k in SentenceKind}


def test_the_checks_annotated_sentences_round_trip() -> None:
    data = _composer_output()
    message = from_seed(verdict_pb2.ComposerOutput, data)
    assert [s.kind for s in message.sentences] == [
        verdict_pb2.ANSWER_SENTENCE_KIND_HEADLINE,
        verdict_pb2.ANSWER_SENTENCE_KIND_NOTE,
        verdict_pb2.ANSWER_SENTENCE_KIND_FINDING,
    ]
    assert message.sentences[1].fixed_line == "missing_header"
    refused = message.sentences[2].violations
    assert [v.rule_id for v in refused] == ["sentence.state@2"] and refused[0].field == "sentences[2]"
    assert from_seed(verdict_pb2.ComposerOutput, to_seed(message)) == message
    assert to_seed(message)["sentences"][2]["kind"] == "finding"


def test_an_unspecified_kind_is_null_and_an_unknown_word_is_refused() -> None:
    message = from_seed(verdict_pb2.AnswerSentence, {"kind": None, "text": "x"})
    assert message.kind == verdict_pb2.ANSWER_SENTENCE_KIND_UNSPECIFIED
    assert to_seed(message)["kind"] is None
    with pytest.raises(CodecError, match="AnswerSentenceKind"):
        from_seed(verdict_pb2.AnswerSentence, {"kind": "summary", "text": "x"})


def _result(composer_output: dict[str, Any] | None) -> ChatResult:
    return ChatResult("s-1", "SUCCESS", "answer", composer_output, None, None, None, "")


def test_the_chat_response_carries_the_sentences_and_the_language() -> None:
    response = convert.chat_response(_result(_composer_output()))
    assert response.language == "zh"
    assert [s.text for s in response.answer_sentences] == [s.text for s in SENTENCES]
    assert list(response.answer_sentences) == list(response.composer_output.sentences)


def test_an_answer_without_sentences_leaves_them_empty() -> None:
    plain = json.loads((GOLDEN / "composer_output.json").read_text(encoding="utf-8"))
    response = convert.chat_response(_result(plain))
    assert response.language == "" and not response.answer_sentences
    assert response.composer_output.user_facing_answer == plain["user_facing_answer"]
    assert not convert.chat_response(_result(None)).answer_sentences


def test_the_composer_event_carries_the_sentences() -> None:
    event = convert.stream_event(StageEvent("s-1", "composer_output", 0, _composer_output()))
    assert len(event.composer_output.sentences) == len(SENTENCES)
    assert event.composer_output.language == "zh"


def test_the_trace_keeps_the_sentences_of_the_answer_and_of_a_refused_output() -> None:
    data = _composer_output()
    trace = session_pb2.Trace()
    trace.composer_output.CopyFrom(from_seed(verdict_pb2.ComposerOutput, data))
    rejection = trace.answer_check_rejections.add(attempt=1)
    rejection.composer_output.CopyFrom(from_seed(verdict_pb2.ComposerOutput, data))
    parsed = session_pb2.Trace.FromString(trace.SerializeToString())
    emitted = to_seed(parsed)
    assert emitted["composer_output"]["sentences"][0]["claim_ids"] == ["claim-1"]
    assert emitted["answer_check_rejections"][0]["composer_output"]["sentences"][2]["violations"]
