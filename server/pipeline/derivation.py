"""A code check under the Verifier: every critical fact of a claim's text (number, percentage,
identifier, error code — rules.text.critical_tokens) must occur in the claim's verified excerpts, the
text must not over-state negative evidence (rules.guard), and it must not hold a template
placeholder its excerpts do not (a weak model's copy of a prompt example: "<service> is firing").

The Gatekeeper proves each excerpt comes from a real tool result, but it never reads claim_text; an
LLM Verifier may still wave through "CPU 95%" cited to an excerpt saying "current=92%". Like the
Gatekeeper severity ceiling, this holds whatever the Verifier said.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evigate.rules import answer_check, guard
from evigate.rules.answer_facts import normalize
from evigate.rules.enums import CheckStatus
from evigate.rules.text import critical_tokens

JSON = dict[str, Any]
_DIGIT = re.compile(r"\d")


def verified_excerpts(claim: JSON, gatekeeper_result: JSON) -> list[str]:
    """The excerpts of this claim's bindings that passed the Gatekeeper."""
    bindings = claim.get("evidence_bindings")
    if not isinstance(bindings, list):
        return []
    passed = {
        b.get("binding_index")
        for b in gatekeeper_result.get("checked_bindings", [])
        if isinstance(b, dict)
        and b.get("claim_id") == claim.get("claim_id")
        and b.get("status") == CheckStatus.PASS
    }
    excerpts = []
    for index, binding in enumerate(bindings):
        if index in passed and isinstance(binding, dict) and isinstance(binding.get("evidence_excerpt"), str):
            excerpts.append(binding["evidence_excerpt"])
    return excerpts


def underived_facts(claim: JSON, gatekeeper_result: JSON) -> list[str]:
    """Critical tokens of claim_text found in none of its verified excerpts."""
    text = claim.get("claim_text")
    if not isinstance(text, str):
        return []
    excerpts = [e.lower() for e in verified_excerpts(claim, gatekeeper_result)]
    return [
        t for t in dict.fromkeys(critical_tokens(text)) if not any(_occurs(t.lower(), e) for e in excerpts)
    ]


def _occurs(token: str, text: str) -> bool:
    """`token` occurs in `text` without being part of a longer number ("92" is not in "925" or "9.2")."""
    numeric = _DIGIT.search(token) is not None
    start = text.find(token)
    while start >= 0:
        end = start + len(token)
        before = text[start - 1] if start > 0 else ""
        after = text[end : end + 2]
        if not numeric or (
            not (before.isdigit() or before == ".")
            and not (after[:1].isdigit() or (after[:1] == "." and after[1:2].isdigit()))
        ):
            return True
        start = text.find(token, start + 1)
    return False


def overstatements(claim: JSON) -> list[str]:
    """Over-statements of negative evidence in claim_text ("问题不存在", "ruled out"): no excerpt can
    support them (docs/design.md §2.3: $.no_evidence only means "this query found nothing")."""
    text = claim.get("claim_text")
    if not isinstance(text, str):
        return []
    return [f"over-statement: {finding.phrase}" for finding in guard.scan(text, [claim])]


def template_placeholders(claim: JSON, gatekeeper_result: JSON) -> list[str]:
    """Placeholders in claim_text that none of its verified excerpts holds ("<init>" of a quoted
    stack frame is data)."""
    text = claim.get("claim_text")
    if not isinstance(text, str):
        return []
    excerpts = [normalize(e) for e in verified_excerpts(claim, gatekeeper_result)]
    return [
        f"placeholder: {p}"
        for p in dict.fromkeys(answer_check.placeholders(text))
        if not any(p in e for e in excerpts)
    ]


def check_claims(claims: Sequence[JSON], gatekeeper_result: JSON) -> dict[str, list[str]]:
    """claim_id → its underived facts, over-statements and placeholders, for the claims that have
    any."""
    out: dict[str, list[str]] = {}
    for claim in claims:
        missing = (
            underived_facts(claim, gatekeeper_result)
            + overstatements(claim)
            + template_placeholders(claim, gatekeeper_result)
        )
        if missing:
            out[str(claim.get("claim_id", ""))] = missing
    return out
