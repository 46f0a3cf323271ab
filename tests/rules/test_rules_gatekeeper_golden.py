"""The labelled corpus under tests/golden/gatekeeper/: realistic executor outputs (valid and forged,
Chinese and English) with their session's invocations, expected severity and failed rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evigate.rules.types import EvidenceRef, InvocationFacts
from tests.support.tool_table import check

CORPUS = Path(__file__).resolve().parents[1] / "golden" / "gatekeeper"
CASES = sorted(CORPUS.glob("*.json"))


def _invocation(raw: dict[str, Any]) -> InvocationFacts:
    refs = raw["evidence_refs"]
    return InvocationFacts(
        raw["id"],
        raw["tool_name"],
        None if refs is None else tuple(EvidenceRef(r["raw_path"], r["text"]) for r in refs),
    )


def test_corpus_is_large_and_balanced() -> None:
    labels = [json.loads(p.read_text())["expected"]["severity"] for p in CASES]
    languages = {json.loads(p.read_text())["language"] for p in CASES}
    assert len(CASES) >= 40
    assert {"none", "low_confid", "reject"} <= set(labels)
    assert languages == {"zh", "en"}


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden_case(path: Path) -> None:
    case = json.loads(path.read_text())
    result = check(case["evidence"], [_invocation(i) for i in case["invocations"]])
    expected = case["expected"]
    got = {"severity": result.severity, "failed_rules": sorted(result.failed_rules)}
    assert got == expected, [e.message for e in result.errors]
    assert (result.status == "pass") is (expected["severity"] == "none")
