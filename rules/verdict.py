"""Code-enforced verdict constraints: never PASS over a Gatekeeper failure (docs/design.md §5.2)."""

from __future__ import annotations

from evigate.rules.enums import Severity, Verdict
from evigate.rules.types import VerdictDecision

VERDICTS = tuple(Verdict)
_RANK: dict[str, int] = {v: i for i, v in enumerate(VERDICTS)}
# The most lenient verdict each Gatekeeper severity allows.
_CEILING: dict[str, Verdict] = {
    Severity.NONE: Verdict.PASS,
    Severity.LOW_CONFID: Verdict.LOW_CONFID,
    Severity.REJECT: Verdict.REJECT,
}


def constrain(proposed: str, severity: str) -> VerdictDecision:
    """Clamp a proposed verdict by the Gatekeeper severity.

    reject → REJECT whatever was proposed; low_confid → at most LOW_CONFID. An unknown verdict or
    severity fails closed (REJECT), since both may come from an LLM or a corrupted record.
    """
    verdict = proposed.strip().upper() if isinstance(proposed, str) else ""
    ceiling = _CEILING.get(severity.strip().lower() if isinstance(severity, str) else "")
    if ceiling is None:
        return VerdictDecision(
            Verdict.REJECT, True, f"unknown gatekeeper severity {severity!r}; failing closed to REJECT"
        )
    if verdict not in _RANK:
        return VerdictDecision(
            Verdict.REJECT, True, f"unknown proposed verdict {proposed!r}; failing closed to REJECT"
        )
    if _RANK[verdict] >= _RANK[ceiling]:
        return VerdictDecision(Verdict(verdict), False, "")
    return VerdictDecision(
        ceiling,
        True,
        f"proposed {verdict} overridden to {ceiling}: gatekeeper severity is {severity}, "
        f"which allows at most {ceiling}",
    )
