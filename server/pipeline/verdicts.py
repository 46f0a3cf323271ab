"""Verdict bookkeeping: the code-enforced constraints over what the Verifier proposed, and the
claim checks they mark unsupported."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evigate.rules import verdict as verdict_rules
from evigate.rules.enums import Severity, Verdict
from evigate.server.pipeline import derivation, material
from evigate.storage.records import RoundRecord

JSON = dict[str, Any]


GUARD_LOWERED = "the answer guard found an over-statement the rewrite could not remove"


def joined(first: str, second: str) -> str:
    return f"{first}; {second}" if first else second


def constrained(
    proposed: JSON, gate: JSON, parse_status: JSON, structured: JSON
) -> tuple[JSON, str | None, str]:
    """Applies the code-enforced verdict constraints, whatever the Verifier said: the Gatekeeper
    severity ceiling, no PASS over an unparsed output, and no claim stating facts its verified
    excerpts lack."""
    label = str(proposed.get("verdict", Verdict.REJECT))
    decision = verdict_rules.constrain(label, str(gate.get("severity", Severity.REJECT)))
    final, reason = str(decision.verdict), decision.reason if decision.overridden else ""
    if parse_status.get("status") != "valid" and final != Verdict.REJECT:
        final, reason = Verdict.REJECT, "the executor output did not parse into executor_evidence_v2"
    verdict = {**proposed, "verdict": final}
    underived = derivation.check_claims(material.claims_of(structured), gate)
    if underived:
        verdict["claim_checks"] = _unsupported(verdict.get("claim_checks"), underived)
        if final != Verdict.REJECT:
            listed = "; ".join(f"{claim_id}: {', '.join(facts)}" for claim_id, facts in underived.items())
            final, reason = (
                Verdict.REJECT,
                f"claims state facts absent from their verified excerpts ({listed})",
            )
            verdict["verdict"] = final
    if final == Verdict.PASS and not material.claims_of(structured):
        # Nothing was claimed, so nothing was verified: a PASS here would vouch for whatever the
        # Composer writes (e.g. an injected "the system is healthy").
        final, reason = Verdict.LOW_CONFID, "no claims: a PASS needs at least one claim its citations support"
        verdict["verdict"] = final
    if reason:
        verdict["rationale"] = f"{proposed.get('rationale', '')} [constraint: {reason}]".strip()
    return verdict, label, reason


def _unsupported(checks: Any, underived: dict[str, list[str]]) -> list[JSON]:
    """The claim checks with every claim that has underived facts marked unsupported."""
    out = [dict(c) for c in checks if isinstance(c, dict)] if isinstance(checks, list) else []
    seen = set()
    for check in out:
        facts = underived.get(str(check.get("claim_id")))
        if facts:
            seen.add(str(check.get("claim_id")))
            check["supported"] = False
            known = [f for f in check.get("unsupported_facts") or [] if f not in facts]
            check["unsupported_facts"] = [*known, *facts]
            check["reason"] = f"{check.get('reason', '')} [facts absent from the verified excerpts]".strip()
    for claim_id, facts in underived.items():
        if claim_id not in seen:
            out.append(
                {
                    "claim_id": claim_id,
                    "supported": False,
                    "reason": "facts absent from the verified excerpts",
                    "unsupported_facts": facts,
                }
            )
    return out


def lowered_by_guard(verdict: JSON, record: RoundRecord) -> tuple[JSON, RoundRecord]:
    """A PASS whose answer the guard could not make safe goes out as LOW_CONFID, and says why."""
    rationale = f"{verdict.get('rationale', '')} [constraint: {GUARD_LOWERED}]".strip()
    lowered = {**verdict, "verdict": Verdict.LOW_CONFID, "rationale": rationale}
    reason = joined(record.verdict_override_reason, GUARD_LOWERED)
    return lowered, replace(record, verdict=lowered, verdict_override_reason=reason)
