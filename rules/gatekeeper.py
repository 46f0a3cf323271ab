"""The Gatekeeper: checks that every citation of an executor output is real (docs/design.md §5.1).

`check` takes the executor output as plain JSON data — possibly adversarial: wrong types, missing
keys, huge lists — and the session's invocations, and never raises on bad input: every problem
becomes an error naming the claim, the binding index, the rule id and a reason. One pass over the
bindings; invocations are indexed by id and their refs by raw_path, so cost grows linearly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules import text as txt
from evigate.rules.gatekeeper_citations import NO_EVIDENCE, CitationChecks
from evigate.rules.gatekeeper_state import MAX_NAME, NEGATIVE, Site, describe
from evigate.rules.rule_catalog import RuleCatalog, load_rule_catalog
from evigate.rules.types import GatekeeperOutcome, InvocationFacts

__all__ = ["NEGATIVE", "NO_EVIDENCE", "check"]


def check(
    evidence: Mapping[str, Any], invocations: Sequence[InvocationFacts], catalog: RuleCatalog | None = None
) -> GatekeeperOutcome:
    """Check an executor output (executor_evidence_v2 seed dict) against the session's invocations."""
    run = _Run(catalog if catalog is not None else load_rule_catalog(), invocations)
    run.check_output(evidence)
    return run.outcome()


class _Run(CitationChecks):
    """One check: the output's contract and its claims' shape here, each binding's citation in
    rules.gatekeeper_citations, the state and how findings are recorded in rules.gatekeeper_state."""

    # --- output and claims ------------------------------------------------------------------

    def check_output(self, evidence: Any) -> None:
        if not isinstance(evidence, Mapping):
            self.fail_at(
                "contract.shape", "", None, f"executor output must be an object, got {describe(evidence)}"
            )
            return
        version = evidence.get("answer_version")
        if version != self.expected_version:
            self.fail_at(
                "contract.answer_version",
                "",
                None,
                f"answer_version is {describe(version)}, expected {self.expected_version!r}",
            )
        self.check_forbidden(evidence, "", None, "the executor output")
        claims = evidence.get("claims")
        if not isinstance(claims, list):
            self.fail_at("contract.shape", "", None, f"claims must be a list, got {describe(claims)}")
            return
        if len(claims) > self.max_claims:
            self.fail_at(
                "contract.shape", "", None, f"{len(claims)} claims exceed the limit of {self.max_claims}"
            )
            claims = claims[: self.max_claims]
        seen_ids: set[str] = set()
        for i, claim in enumerate(claims):
            if self.bindings_seen > self.max_bindings:
                break
            self.check_claim(i, claim, seen_ids)

    def check_forbidden(self, obj: Mapping[Any, Any], claim_id: str, index: int | None, where: str) -> None:
        if self.forbidden.isdisjoint(obj):
            return
        names = ", ".join(sorted(str(k) for k in obj if k in self.forbidden))
        self.fail_at(
            "contract.forbidden_fields", claim_id, index, f"{where} carries forbidden field(s) {names}"
        )

    def check_claim(self, i: int, claim: Any, seen_ids: set[str]) -> None:
        label = f"claims[{i}]"
        if not isinstance(claim, Mapping):
            self.fail_at("contract.shape", label, None, f"{label} must be an object, got {describe(claim)}")
            return
        claim_id = claim.get("claim_id")
        if not isinstance(claim_id, str) or not claim_id or len(claim_id) > MAX_NAME:
            msg = f"{label} needs a non-empty string claim_id of at most {MAX_NAME} characters"
            self.fail_at("contract.shape", label, None, msg)
            claim_id = label
        elif claim_id in seen_ids:
            self.fail_at(
                "contract.shape", claim_id, None, f"claim_id {claim_id!r} is used by more than one claim"
            )
        seen_ids.add(claim_id)
        claim_type = claim.get("claim_type")
        if not isinstance(claim_type, str):
            self.fail_at(
                "contract.shape", claim_id, None, f"claim_type must be a string, got {describe(claim_type)}"
            )
        self.check_forbidden(claim, claim_id, None, f"claim {claim_id}")
        bindings = claim.get("evidence_bindings")
        if not isinstance(bindings, list) or not bindings:
            self.fail_at(
                "contract.bindings_required",
                claim_id,
                None,
                f"claim {claim_id} needs a non-empty evidence_bindings list, got {describe(bindings)}",
            )
            return
        kind = claim_type if isinstance(claim_type, str) else ""
        bound: set[tuple[int, str]] = set()
        for index, binding in enumerate(bindings):
            self.bindings_seen += 1
            if self.bindings_seen > self.max_bindings:
                msg = f"more than {self.max_bindings} bindings in the output; the rest is unchecked"
                self.fail_at("contract.shape", claim_id, index, msg)
                return
            self.check_binding(Site(claim_id, index, kind, bound), binding)

    # --- bindings ---------------------------------------------------------------------------

    def check_binding(self, site: Site, b: Any) -> None:
        if not isinstance(b, Mapping):
            failed = self.fail(
                "contract.binding_fields", site, f"binding must be an object, got {describe(b)}"
            )
            self.record(site, None, "", "", failed=failed)
            return
        tool = b.get("tool_name")
        excerpt = b.get("evidence_excerpt")
        inv_id = b.get("source_invocation_id")
        path = b.get("raw_path")
        problems = []
        if isinstance(tool, str) and 0 < len(tool) <= MAX_NAME:
            site.tool = tool
        else:
            problems.append(
                f"tool_name must be a non-empty string (<= {MAX_NAME} chars), got {describe(tool)}"
            )
        if not isinstance(excerpt, str) or not txt.has_token(excerpt):
            problems.append(f"evidence_excerpt must be a non-empty text, got {describe(excerpt)}")
        elif len(excerpt) > self.max_excerpt:
            problems.append(
                f"evidence_excerpt has {len(excerpt)} characters, over the {self.max_excerpt} limit"
            )
        if inv_id is not None and type(inv_id) is not int:
            problems.append(f"source_invocation_id must be an integer or null, got {describe(inv_id)}")
            inv_id = None
        if path is not None and (not isinstance(path, str) or len(path) > MAX_NAME):
            problems.append(f"raw_path must be a string (<= {MAX_NAME} chars) or null, got {describe(path)}")
            path = None
        self.check_forbidden(b, site.claim_id, site.index, f"binding {site.index} of claim {site.claim_id}")
        if problems:
            failed = self.fail("contract.binding_fields", site, "; ".join(problems))
            # Even with the rule disabled a binding without usable fields verifies nothing.
            self.record(site, inv_id, path or "", "", failed=failed)
            return
        site.excerpt = excerpt if isinstance(excerpt, str) else ""
        self.check_citation(site, inv_id, path or None)
