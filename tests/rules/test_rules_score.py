"""The evidence score: one case per rule of docs/design.md §5.5."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from evigate.rules.score import evaluate
from evigate.rules.types import ScoreFacts

OK_L0 = ScoreFacts("query_logs", "success", "supported", "L0")
OK_L1 = ScoreFacts("lookup_knowledge", "success", "supported", "L1")
NO_HIT = ScoreFacts("query_logs", "success", "no_evidence", "none")
FAILED = ScoreFacts("query_metrics", "failed", "failed", "none")


class Case(NamedTuple):
    status: str
    calls: tuple[ScoreFacts, ...]
    score: int
    factors: tuple[tuple[str, int], ...]


CASES: dict[str, Case] = {
    "no_tool_call": Case("SUCCESS", (), 0, (("no_tool_call", 0),)),
    "execution_failed": Case("FAILED", (OK_L0, OK_L1), 0, (("execution_failed", 0),)),
    "has_successful_tool_call": Case(
        "SUCCESS",
        (ScoreFacts("query_metrics", "success", "supported", "none"),),
        30,
        (("has_successful_tool_call", 30),),
    ),
    "l0_exact_match": Case(
        "SUCCESS", (OK_L0,), 65, (("has_successful_tool_call", 30), ("l0_exact_match", 35))
    ),
    "l1_semantic_match": Case(
        "SUCCESS", (OK_L1,), 50, (("has_successful_tool_call", 30), ("l1_semantic_match", 20))
    ),
    "retrieval_no_hit": Case(
        "SUCCESS", (NO_HIT, NO_HIT), 20, (("has_successful_tool_call", 30), ("retrieval_no_hit", -10))
    ),
    "all_tool_calls_failed (clamped at 0)": Case(
        "SUCCESS", (FAILED, FAILED), 0, (("all_tool_calls_failed", -20),)
    ),
    "L0 wins over L1": Case(
        "SUCCESS", (OK_L1, OK_L0, FAILED), 65, (("has_successful_tool_call", 30), ("l0_exact_match", 35))
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_score_rule(name: str) -> None:
    case = CASES[name]
    result = evaluate(case.status, case.calls)
    assert result.evidence_score == case.score
    assert tuple((f.name, f.delta) for f in result.factors) == case.factors
    assert 0 <= result.evidence_score <= 100


def test_seed_shape_and_chinese_descriptions() -> None:
    calls = (OK_L0,) * 20
    assert evaluate("SUCCESS", calls).to_seed() == {
        "evidence_score": 65,
        "source": "rule",
        "factors": [
            {"name": "has_successful_tool_call", "delta": 30, "description": "有成功的工具调用(20次)"},
            {"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中"},
        ],
        "llm_opinion": None,
    }


def test_short_circuit_order_and_descriptions() -> None:
    assert evaluate("FAILED", ()).factors[0].name == "no_tool_call"
    assert "FAILED" in evaluate("failed", (OK_L0,)).factors[0].description


def test_from_seed_reads_retrieval_details() -> None:
    facts = ScoreFacts.from_seed(
        "query_logs", "success", {"evidence_status": "supported", "match_level": "L0"}
    )
    assert facts == OK_L0
    assert ScoreFacts.from_seed("query_logs", "failed", None).match_level == "none"
