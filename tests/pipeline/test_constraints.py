"""Properties of the code-enforced verdict constraints: whatever the Verifier proposes, no PASS over a
Gatekeeper failure, an unparsed Executor output, or a claim stating facts its excerpts lack."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evigate.server.pipeline.verdicts import constrained as _constrained

WORDS = st.sampled_from(["PASS", "LOW_CONFID", "REJECT", "pass", "low-confidence", "MAYBE", ""])
SEVERITIES = st.sampled_from(["none", "low_confid", "reject", "", "unknown"])
EXCERPT = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m"


def _structured(claim_text: str) -> dict[str, Any]:
    return {
        "claims": [
            {
                "claim_id": "claim-1",
                "claim_text": claim_text,
                "evidence_bindings": [{"evidence_excerpt": EXCERPT}],
            }
        ]
    }


def _gate(severity: str) -> dict[str, Any]:
    return {
        "severity": severity,
        "checked_bindings": [{"claim_id": "claim-1", "binding_index": 0, "status": "pass"}],
    }


@given(proposed=WORDS, severity=SEVERITIES, valid=st.booleans(), percent=st.integers(0, 100))
def test_constraints_never_pass_what_the_code_refuses(
    proposed: str, severity: str, valid: bool, percent: int
) -> None:
    parse = {"status": "valid" if valid else "invalid", "detail": ""}
    claim = f"payment-service HighCPUUsage {percent}%"
    verdict, label, reason = _constrained(
        {"verdict": proposed, "rationale": "r"}, _gate(severity), parse, _structured(claim)
    )

    assert label == proposed
    assert verdict["verdict"] in {"PASS", "LOW_CONFID", "REJECT"}
    if verdict["verdict"] == "PASS":
        assert severity == "none" and valid and percent == 92 and proposed.strip().upper() == "PASS"
        assert reason == ""
    if severity == "reject" or not valid or percent != 92:
        assert verdict["verdict"] == "REJECT"
    if severity == "low_confid":
        assert verdict["verdict"] != "PASS"
    if reason:
        assert "[constraint: " in verdict["rationale"]
