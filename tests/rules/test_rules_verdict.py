"""The Verifier never says PASS over a Gatekeeper failure."""

from __future__ import annotations

import pytest

from evigate.rules.verdict import constrain

CASES = [
    # proposed, severity, verdict, overridden
    ("PASS", "none", "PASS", False),
    ("LOW_CONFID", "none", "LOW_CONFID", False),
    ("REJECT", "none", "REJECT", False),
    ("PASS", "low_confid", "LOW_CONFID", True),
    ("LOW_CONFID", "low_confid", "LOW_CONFID", False),
    ("REJECT", "low_confid", "REJECT", False),
    ("PASS", "reject", "REJECT", True),
    ("LOW_CONFID", "reject", "REJECT", True),
    ("REJECT", "reject", "REJECT", False),
    ("pass", "none", "PASS", False),
    ("MAYBE", "none", "REJECT", True),
    ("PASS", "catastrophic", "REJECT", True),
]


@pytest.mark.parametrize(("proposed", "severity", "verdict", "overridden"), CASES)
def test_constrain(proposed: str, severity: str, verdict: str, overridden: bool) -> None:
    decision = constrain(proposed, severity)
    assert (decision.verdict, decision.overridden) == (verdict, overridden)
    assert bool(decision.reason) is overridden


def test_reason_names_the_severity() -> None:
    decision = constrain("PASS", "low_confid")
    assert "low_confid" in decision.reason and "LOW_CONFID" in decision.reason
    assert decision.to_seed() == {"verdict": "LOW_CONFID", "overridden": True, "reason": decision.reason}
