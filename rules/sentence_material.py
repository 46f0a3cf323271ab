"""The sentence check's material from a session's seed data: the Composer's input (its allowed
claims and hypotheses), the final Gatekeeper result (which bindings passed) and the session's
invocations (the ref text each excerpt cites, and which calls failed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evigate.rules.enums import CheckStatus
from evigate.rules.sentence_types import (
    ClaimFacts,
    Excerpt,
    HypothesisFacts,
    SentenceMaterial,
    hypothesis_id,
)
from evigate.rules.types import InvocationFacts

FAILED_CALL_PREFIX = "call-"
MISSING_PREFIX = "missing-"


def build(
    composer_input: Mapping[str, Any],
    gatekeeper_result: Mapping[str, Any],
    invocations: Sequence[InvocationFacts],
    *,
    failed_calls: Mapping[int, str] | None = None,
    catalog: Iterable[str] = (),
    aliases: Mapping[str, str] | None = None,
) -> SentenceMaterial:
    """`failed_calls`: invocation id → what failed, for each call that failed (the call with its
    arguments and its error, e.g. "query_metrics(service=x) failed (timeout)"). A claim citing one is a
    could-not-check claim; a failed call no claim cites becomes one of its own, `call-<id>`, whose
    text and excerpt are that description. Each item of the input's missing information is a
    could-not-check claim of its own too, `missing-<n>` (from 1), whose text and excerpt are the
    item (the pipeline keeps only items whose every fact the session holds)."""
    failed = dict(failed_calls or {})
    tools = {inv.id: inv.tool_name for inv in invocations}
    refs = {(inv.id, ref.raw_path): ref.text for inv in invocations for ref in inv.evidence_refs or ()}
    passed = {
        (b.get("claim_id"), b.get("binding_index"))
        for b in gatekeeper_result.get("checked_bindings") or []
        if isinstance(b, Mapping) and b.get("status") == CheckStatus.PASS
    }
    claims: list[ClaimFacts] = []
    cited: set[int] = set()
    for claim in composer_input.get("allowed_claims") or []:
        if not isinstance(claim, Mapping) or not isinstance(claim.get("claim_id"), str):
            continue
        claim_id = claim["claim_id"]
        excerpts, fails = [], False
        for index, binding in enumerate(claim.get("evidence_bindings") or []):
            if not isinstance(binding, Mapping) or (claim_id, index) not in passed:
                continue
            inv_id, path = binding.get("source_invocation_id"), binding.get("raw_path")
            text = binding.get("evidence_excerpt")
            if not isinstance(text, str):
                continue
            if isinstance(inv_id, int):
                cited.add(inv_id)
                fails = fails or inv_id in failed
            excerpts.append(
                Excerpt(
                    text,
                    refs.get((inv_id, path), "") if isinstance(inv_id, int) and isinstance(path, str) else "",
                    str(binding.get("tool_name") or tools.get(inv_id, "")),  # type: ignore[arg-type]
                    path if isinstance(path, str) else "",
                )
            )
        text = claim.get("claim_text")
        claims.append(
            ClaimFacts(
                claim_id,
                str(claim.get("claim_type") or ""),
                text if isinstance(text, str) else "",
                tuple(excerpts),
                fails,
            )
        )
    for inv_id, text in failed.items():
        if inv_id not in cited:
            excerpt = Excerpt(text, text, tools.get(inv_id, ""))
            claims.append(ClaimFacts(f"{FAILED_CALL_PREFIX}{inv_id}", "", text, (excerpt,), True))
    for index, item in enumerate(composer_input.get("missing_info") or []):
        if isinstance(item, str) and item.strip():
            excerpt = Excerpt(item, item)
            claims.append(ClaimFacts(f"{MISSING_PREFIX}{index + 1}", "", item, (excerpt,), True))
    hypotheses = [
        HypothesisFacts(hypothesis_id(i), str(h.get("hypothesis_text", "")))
        for i, h in enumerate(composer_input.get("allowed_hypotheses") or [])
        if isinstance(h, Mapping)
    ]
    return SentenceMaterial(
        claims=tuple(claims),
        hypotheses=tuple(hypotheses),
        catalog=tuple(catalog),
        aliases=tuple((aliases or {}).items()),
        question=str(composer_input.get("original_query", "")),
        language=str(composer_input.get("language", "zh")),
    )
