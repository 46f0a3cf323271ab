"""The sentences code writes on its own, not a model: the answer guard's safe phrasing of a negative
claim. Each must pass the sentence check by construction, bound to the claim it speaks for, on every
golden session and in both languages (the offline Composer's own templates: tests/agents/offline)."""

from __future__ import annotations

from typing import Any

import pytest

from evigate.rules import guard
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import ClaimFacts, Sentence, SentenceMaterial
from tests.rules import sentence_sessions

CASES = [
    (session, language)
    for session in sentence_sessions.sessions()
    for language in ("zh", "en")
    if any(c.negative for c in sentence_sessions.material(session).claims)
]


def as_claim(claim: ClaimFacts) -> dict[str, Any]:
    """A negative claim as the guard reads it (the Composer's input)."""
    return {
        "claim_id": claim.claim_id,
        "claim_type": claim.claim_type,
        "claim_text": claim.text,
        "evidence_bindings": [{"evidence_excerpt": e.text, "tool_name": e.tool} for e in claim.excerpts],
    }


def refused(sentence: Sentence, material: SentenceMaterial) -> list[str]:
    return [f"{v.rule_id} {v.token!r}: {v.message}" for v in check([sentence], material).sentences[0]]


@pytest.mark.parametrize(("session", "language"), CASES)
def test_the_guards_safe_phrasing_passes_bound_to_its_claim(session: str, language: str) -> None:
    material = sentence_sessions.material(session, language)
    for claim in (c for c in material.claims if c.negative):
        # an over-statement the guard rewrites: the sentence it writes in the over-statement's place
        text = "一切正常。" if language == "zh" else "The system is healthy."
        (finding,) = guard.scan(text, [as_claim(claim)])
        safe = guard.rewrite(text, [finding], language)
        assert guard.scan(safe, [as_claim(claim)]) == []
        sentence = Sentence(SentenceKind.ABSENCE, safe, (claim.claim_id,))
        assert refused(sentence, material) == [], safe


def test_the_safe_phrasing_names_where_the_query_looked() -> None:
    claim = {
        "claim_id": "c",
        "claim_type": "negative_observation",
        "claim_text": "This query found no matching evidence in the knowledge base.",
        "evidence_bindings": [
            {
                "evidence_excerpt": "no runbook matched; query=RedisEvictionsHigh steps",
                "tool_name": "lookup_knowledge",
            }
        ],
    }
    (zh,) = guard.scan("一切正常。", [claim])
    (en,) = guard.scan("The system is healthy.", [claim])
    assert zh.safe_phrasing == "当前查询在知识库中未检索到与 RedisEvictionsHigh steps 匹配的证据。"
    assert (
        en.safe_phrasing
        == "This query found no matching evidence in the knowledge base for RedisEvictionsHigh steps."
    )
