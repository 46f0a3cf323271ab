"""The LLM Composer over the scripted OpenAI-compatible server: what the model is shown (every id
it may bind, and on a retry its refused sentences with their rules) and how its reply becomes the
structured answer (code joins the sentences, adds the markers and the actions)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evigate.rules.sentence_types import ClaimFacts, Excerpt, HypothesisFacts, SentenceMaterial
from evigate.server.agents.llm import LLMClient, LLMOutputError
from evigate.server.agents.llm.composer import LLMComposer, payload, refusals
from evigate.server.deadline import Deadline
from tests.agents.llm.conftest import ALERT
from tests.support.fake_openai import FakeOpenAI, json_reply, reply
from tests.support.llm_script import fixed, sentence

CLAIM = "payment-service has a firing HighCPUUsage alert; CPU usage is 92%."
INPUT: dict[str, Any] = {
    "original_query": "Does payment-service have a HighCPUUsage alert?",
    "language": "en",
    "verdict": "PASS",
    "allowed_claims": [{"claim_id": "claim-1", "claim_type": "observation", "claim_text": CLAIM}],
    "allowed_hypotheses": [{"hypothesis_text": "a traffic spike may explain the CPU load (unconfirmed)"}],
    "missing_info": [],
    "recommended_actions": [
        {"action_text": "query payment-service's CPU over a wider window", "reason": "one sample only"},
        {"action_text": "restart payment-service", "reason": "CPU is high"},
    ],
}
MATERIAL = SentenceMaterial(
    claims=(
        ClaimFacts("claim-1", "observation", CLAIM, (Excerpt(ALERT, ALERT, "query_metrics", "$.alerts[0]"),)),
        ClaimFacts("call-7", "", "query_logs(service=payment-service) failed (timeout)", failed=True),
    ),
    hypotheses=(HypothesisFacts("hypothesis-1", "a traffic spike may explain the CPU load (unconfirmed)"),),
    question="Does payment-service have a HighCPUUsage alert?",
    language="en",
)


async def test_the_models_sentences_are_joined_by_code(client: LLMClient, fake: FakeOpenAI) -> None:
    said = [
        sentence("headline", "Yes: payment-service has HighCPUUsage firing at 92%.", "claim-1"),
        fixed("could_not_check_header"),
        sentence("could_not_check", "The payment-service log query failed.", "call-7"),
        {"kind": "summary", "text": "All fine.", "claim_ids": ["claim-1"], "hypothesis_ids": []},
    ]
    fake.script([reply("Here you go:\n" + json.dumps({"sentences": said}) + "\nThanks")])
    out = await LLMComposer(client).compose_from(INPUT, Deadline.after(5), MATERIAL)

    assert out.prompt_version == "composer-v5"
    data = out.data
    assert data["user_facing_answer"] == (
        "Yes: payment-service has HighCPUUsage firing at 92%. [1]\n"
        "Could not be checked:\n"
        "- The payment-service log query failed. [2]\n"
        "- All fine. [1]"  # a list runs to the next fixed line
    )
    assert data["answer_summary"] == "Yes: payment-service has HighCPUUsage firing at 92%."
    assert [s["kind"] for s in data["sentences"]] == ["headline", "note", "could_not_check", None]
    assert data["sentences"][1]["text"] == "Could not be checked:"  # a fixed line's text is code's
    assert data["recommended_actions"] == [INPUT["recommended_actions"][0]]  # no remediation
    # what the model was shown: the ids it may bind, and the language said last
    request = fake.requests[0]
    shown = json.loads(request.messages[3]["content"])  # after the preamble, question and prompt
    assert shown["could_not_check"] == [{"claim_id": "call-7", "text": MATERIAL.claims[1].text}]
    assert shown["allowed_hypotheses"][0]["hypothesis_id"] == "hypothesis-1"
    assert request.messages[-1]["content"].startswith("Write every sentence's text in English only")


async def test_a_reply_of_plain_text_is_read_as_sentences_bound_to_nothing(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    answer = {
        "answer_summary": "x",
        "recommended_actions": [],
        "user_facing_answer": "CPU is high.\nAll good.",
    }
    fake.script([json_reply(answer)])
    out = await LLMComposer(client).compose({**INPUT, "language": "zh"}, Deadline.after(5))

    assert [(s["text"], s["claim_ids"]) for s in out.data["sentences"]] == [
        ("CPU is high.", []),
        ("All good.", []),
    ]
    assert fake.requests[0].messages[-1]["content"].startswith("每个句子的 text 只用中文书写")


@pytest.mark.parametrize(
    "content",
    [
        "当前查询未检索到相关日志。",
        '{"answer_summary": "x"}',
        '{"sentences": []}',
        '{"sentences": [{"text": " "}]}',
    ],
)
async def test_a_reply_without_a_sentence_is_unusable(
    client: LLMClient, fake: FakeOpenAI, content: str
) -> None:
    fake.script([reply(content)])
    with pytest.raises(LLMOutputError):
        await LLMComposer(client).compose_from(INPUT, Deadline.after(5), MATERIAL)


def test_the_retry_is_told_each_refused_sentence_with_its_rules() -> None:
    rejected = {
        "sentences": [
            sentence("headline", "Yes: HighCPUUsage is firing.", "claim-1"),
            sentence("finding", "The alert has resolved.", "claim-1"),
        ]
    }
    check = {
        "rejected_output": rejected,
        "violations": [
            {"rule_id": "sentence.state@2", "field": "sentences[1]", "token": "resolved", "message": "m"},
            {
                "rule_id": "answer.wrong_language",
                "field": "user_facing_answer",
                "token": "zh",
                "message": "w",
            },
        ],
    }
    told = payload({**INPUT, "answer_check": check}, MATERIAL)["answer_check"]
    assert told == refusals(check)
    (refused,) = told["refused_sentences"]
    assert refused["index"] == 1 and refused["text"] == "The alert has resolved."
    (rule,) = refused["rules"]
    assert rule["rule_id"] == "sentence.state@2" and rule["token"] == "resolved"
    assert rule["meaning"].startswith("firing / resolved")  # the rule's meaning, from the rules' table
    assert [k["text"] for k in told["kept_sentences"]] == ["Yes: HighCPUUsage is firing."]
    assert [v["rule_id"] for v in told["answer_violations"]] == ["answer.wrong_language"]


def test_the_model_is_shown_what_calls_found_not_a_no_evidence_call_s_diagnostics() -> None:
    found = {
        "source_type": "tool_trace",
        "source_invocation_id": 3,
        "tool_name": "query_metrics",
        "raw_path": "$.alerts[0]",
        "evidence_excerpt": ALERT,
    }
    nothing = {
        "source_type": "tool_trace",
        "source_invocation_id": 4,
        "tool_name": "query_promql",
        "raw_path": "$.no_evidence",
        "evidence_excerpt": "query_promql returned no evidence; tried=sum(rate(container_cpu[5m]))",
    }
    claim = {**INPUT["allowed_claims"][0], "evidence_bindings": [found, nothing]}
    shown = payload({**INPUT, "allowed_claims": [claim]}, MATERIAL)["allowed_claims"]
    assert shown == [
        {
            "claim_id": "claim-1",
            "claim_type": "observation",
            "claim_text": CLAIM,
            "evidence_bindings": [{"tool_name": "query_metrics", "evidence_excerpt": ALERT}],
        }
    ]
