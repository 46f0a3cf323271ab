"""rules.case_facts and rules.opinion on plain data: the catalog is data an operator can replace,
error codes come most specific first and verbatim, and the opinion check believes code over the
model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evigate.rules.case_facts import (
    CaseEvidence,
    FaultCatalogError,
    VerifiedExcerpt,
    error_codes,
    extract,
    load_fault_catalog,
)
from evigate.rules.opinion import OpinionFormatError, code_marks, disagreements, factors, parse_items


def evidence(*texts: str, tool: str = "query_logs", skill: str | None = None) -> CaseEvidence:
    return CaseEvidence(tuple(VerifiedExcerpt(tool, t) for t in texts), skill)


def test_error_codes_most_specific_first_and_verbatim() -> None:
    found = error_codes(
        evidence(
            "GET /pay 503 upstream failed: ECONNREFUSED",
            "ORA-12541: TNS no listener",
            "at com.acme.pay.GatewayDownException: card network",
            "TimeoutError: gave up",
        )
    )
    assert found == ("com.acme.pay.GatewayDownException", "ORA-12541", "ECONNREFUSED", "TimeoutError", "503")


def test_nothing_matches_is_unknown_and_no_code() -> None:
    facts = extract(evidence("2026-01-01 INFO billing deployed build 7"))
    assert (facts.fault_category, facts.error_code, facts.signals) == ("unknown", None, ())


def test_an_operators_catalog_replaces_the_shipped_one(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text(
        json.dumps(
            {
                "version": "ops-v1",
                "fallback": "other",
                "categories": [{"name": "payments", "patterns": ["card network"]}],
            }
        ),
        encoding="utf-8",
    )
    catalog = load_fault_catalog(path)
    assert extract(evidence("card network down"), catalog).fault_category == "payments"
    assert extract(evidence("disk full"), catalog).fault_category == "other"
    path.write_text(json.dumps({"categories": [{"name": "x", "patterns": ["("]}]}), encoding="utf-8")
    with pytest.raises(FaultCatalogError, match="bad pattern"):
        load_fault_catalog(path)


def test_skill_and_alert_outweigh_a_passing_word() -> None:
    facts = extract(
        CaseEvidence(
            (
                VerifiedExcerpt(
                    "query_metrics", "HighLatency, service=api, state=firing, summary=timeout budget"
                ),
            ),
            "diagnose-high-latency",
        )
    )
    assert facts.fault_category == "latency"
    assert facts.alert_names == ("HighLatency",) and facts.services == ("api",)


def _opinion(verified_only: bool) -> dict[str, object]:
    names = ("has_root_cause", "has_solution", "answers_the_question", "states_only_verified_facts")
    return {n: {"value": verified_only if n == names[-1] else False, "reason": "r"} for n in names}


def test_a_true_verified_only_against_code_marks_is_a_disagreement() -> None:
    items = parse_items(_opinion(True))
    marks = code_marks({"verdict": "RETRY", "gatekeeper_result": {"severity": "low_confid"}})
    assert marks == ("gatekeeper severity=low_confid", "final verdict=RETRY")
    (disagreement,) = disagreements(items, marks)
    assert disagreement.item == "states_only_verified_facts"
    assert disagreements(parse_items(_opinion(False)), marks) == ()
    assert (
        disagreements(items, code_marks({"verdict": "PASS", "gatekeeper_result": {"severity": "none"}})) == ()
    )
    assert {f["delta"] for f in factors(items, (disagreement,))} == {0}


def test_a_malformed_opinion_is_refused() -> None:
    with pytest.raises(OpinionFormatError):
        parse_items({"has_root_cause": {"value": "yes", "reason": "r"}})
