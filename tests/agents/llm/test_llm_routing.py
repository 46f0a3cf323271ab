"""The model's Verifier verdict over claims code wrote (server.agents.llm.routing): a REJECT of
claims code wrote and the Gatekeeper passed is a recorded disagreement, and code's verdict stands,
so when code's check passes them all the model is not asked; over the model's own claims, the
model's REJECT is the verdict."""

from __future__ import annotations

import json

import pytest

from evigate.server.agents.base import BY_CODE, CLAIMS_BY, JSON, StageOutput
from evigate.server.agents.llm import LLMClient, LLMVerifier
from evigate.server.agents.llm.routing import VERIFIER_DISAGREEMENT, evidence_gap, plan_gap
from evigate.server.deadline import Deadline
from tests.support.fake_openai import FakeOpenAI, json_reply

REJECT = {
    "verdict": "REJECT",
    "groundedness_score": 0.0,
    "critical_fact_count": 1,
    "claim_checks": [],
    "facts_checked": [],
    "rationale": "not sure",
}


class _Code:
    """An offline Verifier that says `verdict`, claim-1 supported and claim-2 not."""

    def __init__(self, verdict: str) -> None:
        self.verdict = verdict

    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        checks = [{"claim_id": "claim-1", "supported": True}, {"claim_id": "claim-2", "supported": False}]
        if self.verdict == "PASS":
            checks = checks[:1]
        return StageOutput(
            {"verdict": self.verdict, "rationale": "code's check", "claim_checks": checks},
            "offline-verifier-v2",
        )


def _input(claims_by: str, severity: str = "none") -> JSON:
    return {"original_query": "q", "gatekeeper_result": {"severity": severity}, CLAIMS_BY: claims_by}


async def test_code_s_claims_that_code_s_check_passes_are_not_put_to_the_model(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    out = await LLMVerifier(client, _Code("PASS")).verify(_input("code"), Deadline.after(5))
    assert out.data["verdict"] == "PASS" and out.prompt_version == "offline-verifier-v2"
    assert fake.requests == []  # the model could only agree or record a disagreement
    [note] = out.notes
    assert note.kind == BY_CODE and "was not asked" in note.detail


async def test_a_reject_of_code_s_verified_claims_is_a_disagreement(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([json_reply(REJECT)])
    out = await LLMVerifier(client, _Code("LOW_CONFID")).verify(_input("code"), Deadline.after(5))
    assert out.data["verdict"] == "LOW_CONFID"
    [note] = [n for n in out.notes if n.kind == VERIFIER_DISAGREEMENT]
    assert "the model said REJECT" in note.detail and "not sure" in note.detail
    assert CLAIMS_BY not in json.loads(fake.requests[0].messages[3]["content"])


async def test_a_claim_of_code_s_the_model_calls_unsupported_is_a_disagreement(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    refused = {"claim_id": "claim-1", "supported": False, "reason": "unsure", "unsupported_facts": []}
    fake.script([json_reply({**REJECT, "verdict": "LOW_CONFID", "claim_checks": [refused]})])
    out = await LLMVerifier(client, _Code("LOW_CONFID")).verify(_input("code"), Deadline.after(5))
    assert out.data["verdict"] == "LOW_CONFID" and out.data["rationale"] == "code's check"
    [note] = [n for n in out.notes if n.kind == VERIFIER_DISAGREEMENT]
    assert "claim-1 unsupported" in note.detail


@pytest.mark.parametrize(("claims_by", "severity"), [("model", "none"), ("code", "low_confid")])
async def test_otherwise_the_model_s_verdict_stands(
    client: LLMClient, fake: FakeOpenAI, claims_by: str, severity: str
) -> None:
    fake.script([json_reply(REJECT)])
    out = await LLMVerifier(client, _Code("PASS")).verify(_input(claims_by, severity), Deadline.after(5))
    assert out.data["verdict"] == "REJECT"
    assert not [n for n in out.notes if n.kind == VERIFIER_DISAGREEMENT]


def test_the_gaps_that_ask_the_model() -> None:
    assert plan_gap([]) == "code read no call off the question"
    assert plan_gap([{"tool_name": "list_services", "arguments": {"name": "x"}}]) is not None
    assert plan_gap([{"tool_name": "query_logs", "arguments": {"service": "x"}}]) is None
    assert evidence_gap([]) == "no planned call ran"
