"""The enums are the stored words: a member equals its word, serializes as it, and every word the
contract's golden files use for these fields is a member."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

import pytest

from evigate.rules.enums import (
    CallStatus,
    CheckStatus,
    ClaimType,
    EvidenceStatus,
    MatchLevel,
    SessionStatus,
    Severity,
    ToolName,
    Verdict,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
WORDS: dict[type[StrEnum], set[str]] = {
    CallStatus: {"success", "failed"},
    EvidenceStatus: {"supported", "no_evidence", "deduped", "failed"},
    MatchLevel: {"L0", "L1", "none"},
    Severity: {"none", "low_confid", "reject"},
    CheckStatus: {"pass", "fail"},
    Verdict: {"PASS", "LOW_CONFID", "REJECT"},
    SessionStatus: {"RUNNING", "SUCCESS", "FAILED", "AGENT"},
    ClaimType: {"observation", "negative_observation", "symptom", "root_cause"},
    ToolName: {
        "query_metrics",
        "query_logs",
        "lookup_knowledge",
        "query_promql",
        "summarize_logs",
        "list_services",
        "query_k8s",
        "query_k8s_events",
        "k8s_rollout_history",
    },
}


@pytest.mark.parametrize("enum", list(WORDS), ids=lambda e: e.__name__)
def test_members_are_the_stored_words(enum: type[StrEnum]) -> None:
    assert {m.value for m in enum} == WORDS[enum]
    for member in enum:
        assert member == member.value and f"{member}" == member.value and str(member) == member.value
        assert json.dumps({"k": member}) == json.dumps({"k": member.value})
        assert enum(member.value) is member


def _values(data: object, key: str) -> set[str]:
    if isinstance(data, dict):
        found = {data[key]} if isinstance(data.get(key), str) else set()
        return found.union(*(_values(v, key) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(_values(v, key) for v in data))
    return set()


@pytest.mark.parametrize(
    ("key", "enum"),
    [
        ("evidence_status", EvidenceStatus),
        ("severity", Severity),
        ("verdict", Verdict),
        ("claim_type", ClaimType),
    ],
)
def test_golden_words_are_members(key: str, enum: type[StrEnum]) -> None:
    seen: set[str] = set()
    for path in GOLDEN.glob("*.json"):
        seen |= _values(json.loads(path.read_text(encoding="utf-8")), key)
    assert seen, key
    assert seen <= {m.value for m in enum}
