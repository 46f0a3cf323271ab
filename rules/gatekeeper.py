"""The Gatekeeper: checks that every citation of an executor output is real (docs/design.md §5.1).

`check` takes the executor output as plain JSON data — possibly adversarial: wrong types, missing
keys, huge lists — and the session's invocations, and never raises on bad input: every problem
becomes an error naming the claim, the binding index, the rule id and a reason. One pass over the
bindings; invocations are indexed by id and their refs by raw_path, so cost grows linearly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules import text as txt
from evigate.rules import verbatim
from evigate.rules.catalog import Catalog, load_catalog
from evigate.rules.enums import CheckStatus, ClaimType, Severity
from evigate.rules.types import (
    SEVERITY_RANK,
    CheckedBinding,
    GatekeeperIssue,
    GatekeeperOutcome,
    InvocationFacts,
    VerifiedBinding,
)

NO_EVIDENCE = "$.no_evidence"
NEGATIVE = ClaimType.NEGATIVE_OBSERVATION
# Enum members read once: an attribute lookup on an enum class costs more than the fast path's work.
_PASS, _FAIL, _WARN_ONLY = CheckStatus.PASS, CheckStatus.FAIL, Severity.NONE
# Ids, tool names and paths are short; longer ones are rejected before they reach any message.
_MAX_NAME = 200
_PATH = re.compile(r"\$\.([a-z_]+)\[(0|[1-9][0-9]{0,8})\]")


def check(
    evidence: Mapping[str, Any], invocations: Sequence[InvocationFacts], catalog: Catalog | None = None
) -> GatekeeperOutcome:
    """Check an executor output (executor_evidence_v2 seed dict) against the session's invocations."""
    run = _Run(catalog if catalog is not None else load_catalog(), invocations)
    run.check_output(evidence)
    return run.outcome()


class _Site:
    """Where a binding sits (claim, index) and what it claims, for the checks and their messages."""

    __slots__ = ("bound", "claim_id", "claim_type", "excerpt", "index", "negative", "tool")

    def __init__(self, claim_id: str, index: int, claim_type: str, bound: set[tuple[int, str]]) -> None:
        self.claim_id = claim_id
        self.index = index
        self.claim_type = claim_type
        self.negative = claim_type == NEGATIVE
        self.bound = bound
        self.tool = ""
        self.excerpt = ""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Run:
    """State of one check: indexes, the rule switches, and what has been found so far."""

    def __init__(self, catalog: Catalog, invocations: Sequence[InvocationFacts]) -> None:
        self.catalog = catalog
        self.severity = catalog.severities()
        self.expected_version = catalog.param("contract.answer_version", "expected")
        self.forbidden = frozenset(catalog.param("contract.forbidden_fields", "fields"))
        self.arrays: Mapping[str, str] = catalog.param("citation.raw_path_grammar", "arrays")
        self.claim_types: Mapping[str, Sequence[str]] = catalog.param(
            "citation.raw_path_grammar", "claim_types"
        )
        # With the rule off, a left-out negation is not looked for at all.
        self.negations: verbatim.Negations | None = None
        if "excerpt.negation_elided" in self.severity:
            self.negations = verbatim.Negations.of(
                catalog.param("excerpt.negation_elided", "words"),
                catalog.param("excerpt.negation_elided", "cjk"),
                catalog.param("excerpt.negation_elided", "cjk_except"),
            )
        self.max_claims = int(catalog.param("contract.shape", "max_claims"))
        self.max_bindings = int(catalog.param("contract.shape", "max_bindings"))
        self.max_excerpt = int(catalog.param("contract.shape", "max_excerpt_chars"))
        # Back-fill compares an excerpt with many refs; a budget keeps adversarial input linear.
        self.backfill_budget = int(catalog.param("backfill.unique_match", "max_comparisons"))
        self.by_id: dict[int, InvocationFacts] = {}
        self.refs: dict[int, dict[str, str] | None] = {}
        for inv in invocations:
            if inv.id in self.by_id:
                continue
            self.by_id[inv.id] = inv
            if inv.evidence_refs is None:
                self.refs[inv.id] = None
            else:
                paths: dict[str, str] = {}
                for ref in inv.evidence_refs:
                    paths.setdefault(ref.raw_path, ref.text)
                self.refs[inv.id] = paths
        self._by_tool: dict[str, list[InvocationFacts]] | None = None
        self.errors: list[GatekeeperIssue] = []
        self.warnings: list[GatekeeperIssue] = []
        self.failed_rules: dict[str, None] = {}
        self.checked: list[CheckedBinding] = []
        self.verified: dict[str, list[VerifiedBinding]] = {}
        self.bindings_seen = 0

    # --- reporting --------------------------------------------------------------------------

    def fail(self, rule_id: str, site: _Site, message: str) -> bool:
        return self.fail_at(rule_id, site.claim_id, site.index, message)

    def fail_at(self, rule_id: str, claim_id: str, index: int | None, message: str) -> bool:
        """Record a failure of `rule_id`; False when the rule is disabled or only warns."""
        severity = self.severity.get(rule_id)
        if severity is None:
            return False
        issue = GatekeeperIssue(claim_id, index, rule_id, severity, message)
        if severity == _WARN_ONLY:
            self.warnings.append(issue)
            return False
        self.errors.append(issue)
        self.failed_rules[rule_id] = None
        return True

    def outcome(self) -> GatekeeperOutcome:
        worst = max((SEVERITY_RANK[e.severity] for e in self.errors), default=0)
        severity = next(s for s, rank in SEVERITY_RANK.items() if rank == worst)
        return GatekeeperOutcome(
            status=_FAIL if self.errors else _PASS,
            severity=severity,
            rule_set_version=self.catalog.version,
            rules=self.catalog.enabled_infos(),
            checked_bindings=tuple(self.checked),
            failed_rules=tuple(self.failed_rules),
            warnings=tuple(self.warnings),
            errors=tuple(self.errors),
            verified_bindings={k: tuple(v) for k, v in self.verified.items()},
        )

    # --- output and claims ------------------------------------------------------------------

    def check_output(self, evidence: Any) -> None:
        if not isinstance(evidence, Mapping):
            self.fail_at(
                "contract.shape", "", None, f"executor output must be an object, got {_describe(evidence)}"
            )
            return
        version = evidence.get("answer_version")
        if version != self.expected_version:
            self.fail_at(
                "contract.answer_version",
                "",
                None,
                f"answer_version is {_describe(version)}, expected {self.expected_version!r}",
            )
        self.check_forbidden(evidence, "", None, "the executor output")
        claims = evidence.get("claims")
        if not isinstance(claims, list):
            self.fail_at("contract.shape", "", None, f"claims must be a list, got {_describe(claims)}")
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
            self.fail_at("contract.shape", label, None, f"{label} must be an object, got {_describe(claim)}")
            return
        claim_id = claim.get("claim_id")
        if not isinstance(claim_id, str) or not claim_id or len(claim_id) > _MAX_NAME:
            msg = f"{label} needs a non-empty string claim_id of at most {_MAX_NAME} characters"
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
                "contract.shape", claim_id, None, f"claim_type must be a string, got {_describe(claim_type)}"
            )
        self.check_forbidden(claim, claim_id, None, f"claim {claim_id}")
        bindings = claim.get("evidence_bindings")
        if not isinstance(bindings, list) or not bindings:
            self.fail_at(
                "contract.bindings_required",
                claim_id,
                None,
                f"claim {claim_id} needs a non-empty evidence_bindings list, got {_describe(bindings)}",
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
            self.check_binding(_Site(claim_id, index, kind, bound), binding)

    # --- bindings ---------------------------------------------------------------------------

    def check_binding(self, site: _Site, b: Any) -> None:
        if not isinstance(b, Mapping):
            failed = self.fail(
                "contract.binding_fields", site, f"binding must be an object, got {_describe(b)}"
            )
            self.record(site, None, "", "", failed=failed)
            return
        tool = b.get("tool_name")
        excerpt = b.get("evidence_excerpt")
        inv_id = b.get("source_invocation_id")
        path = b.get("raw_path")
        problems = []
        if isinstance(tool, str) and 0 < len(tool) <= _MAX_NAME:
            site.tool = tool
        else:
            problems.append(
                f"tool_name must be a non-empty string (<= {_MAX_NAME} chars), got {_describe(tool)}"
            )
        if not isinstance(excerpt, str) or not txt.has_token(excerpt):
            problems.append(f"evidence_excerpt must be a non-empty text, got {_describe(excerpt)}")
        elif len(excerpt) > self.max_excerpt:
            problems.append(
                f"evidence_excerpt has {len(excerpt)} characters, over the {self.max_excerpt} limit"
            )
        if inv_id is not None and type(inv_id) is not int:
            problems.append(f"source_invocation_id must be an integer or null, got {_describe(inv_id)}")
            inv_id = None
        if path is not None and (not isinstance(path, str) or len(path) > _MAX_NAME):
            problems.append(
                f"raw_path must be a string (<= {_MAX_NAME} chars) or null, got {_describe(path)}"
            )
            path = None
        self.check_forbidden(b, site.claim_id, site.index, f"binding {site.index} of claim {site.claim_id}")
        if problems:
            failed = self.fail("contract.binding_fields", site, "; ".join(problems))
            # Even with the rule disabled a binding without usable fields verifies nothing.
            self.record(site, inv_id, path or "", "", failed=failed)
            return
        site.excerpt = excerpt if isinstance(excerpt, str) else ""
        self.check_citation(site, inv_id, path or None)

    def check_citation(self, site: _Site, inv_id: int | None, path: str | None) -> None:
        failed = False
        path_ok = True
        inv = self.by_id.get(inv_id) if inv_id is not None else None
        if path is not None:
            # Judge the path by the cited invocation's real tool: a wrong tool_name is its own failure.
            path_ok, failed = self.check_path(site, path, inv.tool_name if inv is not None else site.tool)
        if inv_id is not None:
            if inv is None:
                msg = f"source_invocation_id {inv_id} is no tool invocation of this session (forged citation)"
                failed = self.fail("citation.invocation_exists", site, msg) or failed
                self.record(site, inv_id, path or "", "", failed=failed)
                return
            if inv.tool_name != site.tool:
                msg = f"tool_name {site.tool!r} differs from invocation {inv_id}'s tool {inv.tool_name!r}"
                failed = self.fail("citation.tool_name", site, msg) or failed
            refs = self.refs[inv_id]
            if refs is None:
                msg = (
                    f"invocation {inv_id} was stored without evidence_refs; the citation cannot be confirmed"
                )
                failed = self.fail("backfill.refs_missing", site, msg) or failed
                self.record(site, inv_id, path or "", "", failed=failed)
                return
            if path is not None:
                self.check_ref(site, inv_id, path, refs, failed=failed, path_ok=path_ok)
                return
        if not path_ok:
            self.record(site, inv_id, path or "", "", failed=failed)
            return
        filled, backfill_failed = self.backfill(site, inv_id, path)
        if filled is None:
            self.record(site, inv_id, path or "", "", failed=failed or backfill_failed)
            return
        new_id, new_path, text = filled
        if path is None:
            failed = self.check_path(site, new_path, site.tool)[1] or failed
        failed = self.check_bound_once(site, new_id, new_path) or failed
        self.record(site, new_id, new_path, text, failed=failed, backfilled=True)

    def check_ref(
        self, site: _Site, inv_id: int, path: str, refs: Mapping[str, str], *, failed: bool, path_ok: bool
    ) -> None:
        failed = self.check_bound_once(site, inv_id, path) or failed
        text = refs.get(path) if path_ok else None
        if text is None:
            if path_ok:
                msg = f"raw_path {path!r} is not among the evidence_refs of invocation {inv_id}"
                failed = self.fail("citation.raw_path_exists", site, msg) or failed
            self.record(site, inv_id, path, "", failed=failed)
            return
        found = self.supports(site.excerpt, text)
        where = f"{path} of invocation {inv_id}"
        if found.unsupported:
            # A changed number or identifier is the sharper finding; the verbatim rule still
            # rejects the excerpt when the critical-token rule is off or only warns.
            missing = txt.compare(site.excerpt, txt.Source(text))[1]
            pinned = False
            if missing:
                shown = ", ".join(missing[:8]) + (" ..." if len(missing) > 8 else "")
                msg = f"excerpt states {shown}, absent from {where} (beyond the source)"
                pinned = self.fail("excerpt.critical_tokens", site, msg)
            if not pinned:
                msg = (
                    f"excerpt is not {where}'s own words: {_describe(found.unsupported)} is not in it "
                    "(an excerpt quotes its ref text word for word; an ellipsis may join spans in order)"
                )
                pinned = self.fail("excerpt.verbatim", site, msg)
            failed = pinned or failed
        elif found.negation:
            msg = f"excerpt leaves out the negation {found.negation!r} of {where} (it would say the opposite)"
            failed = self.fail("excerpt.negation_elided", site, msg) or failed
        self.record(site, inv_id, path, text, failed=failed)

    def check_path(self, site: _Site, path: str, tool: str) -> tuple[bool, bool]:
        """Grammar and negative-observation checks; returns (path usable for lookup, a rule failed)."""
        failed = False
        allowed = self.claim_types.get(tool)
        if allowed is not None and site.claim_type not in allowed:
            msg = (
                f"{tool} may not be cited by a {_describe(site.claim_type)} claim (only {', '.join(allowed)})"
            )
            failed = self.fail("citation.raw_path_grammar", site, msg)
        if path == NO_EVIDENCE:
            return True, failed
        usable = True
        m = _PATH.fullmatch(path)
        expected = self.arrays.get(tool)
        if m is None or m.group(1) != expected:
            want = f"$.{expected}[i] or {NO_EVIDENCE}" if expected else NO_EVIDENCE
            msg = f"raw_path {path!r} is not valid for {tool}: expected {want} (no field sub-paths)"
            failed = self.fail("citation.raw_path_grammar", site, msg) or failed
            # With the grammar rule disabled the path is still looked up as given.
            usable = not failed
        if site.negative:
            msg = f"negative_observation binds {path!r}; it may bind only {NO_EVIDENCE}"
            failed = self.fail("negative.no_evidence_only", site, msg) or failed
        return usable, failed

    def check_bound_once(self, site: _Site, inv_id: int, path: str) -> bool:
        key = (inv_id, path)
        if key in site.bound:
            msg = (
                f"{path} of invocation {inv_id} is bound twice by this claim; merge its fields in one excerpt"
            )
            return self.fail("citation.item_bound_once", site, msg)
        site.bound.add(key)
        return False

    def supports(self, excerpt: str, text: str) -> verbatim.Support:
        """Whether a ref text supports an excerpt word for word (rules.verbatim)."""
        if txt.quotes_cleanly(excerpt, text):  # an exact quote: only a left-out negation can fail it
            if self.negations is None:
                return verbatim.SUPPORTED
            negation = verbatim.quoted_negation(text, text.find(excerpt), self.negations)
            return verbatim.Support(negation=negation) if negation else verbatim.SUPPORTED
        return verbatim.support(excerpt, text, self.negations)

    # --- back-fill --------------------------------------------------------------------------

    def backfill(
        self, site: _Site, inv_id: int | None, path: str | None
    ) -> tuple[tuple[int, str, str] | None, bool]:
        """Fill a missing invocation id and/or raw_path when exactly one invocation ref matches
        tool_name + raw_path + excerpt: a warning when filled, low_confid otherwise.
        Returns ((id, raw_path, text) or None, whether a rule failed)."""
        missing = " and ".join(
            n for n, v in (("source_invocation_id", inv_id), ("raw_path", path)) if v is None
        )
        candidates: list[tuple[int, str, str]] = []
        without_refs = 0
        exhausted = False
        pool = [self.by_id[inv_id]] if inv_id is not None else self.tool_index().get(site.tool, [])
        for inv in pool:
            refs = self.refs[inv.id]
            if refs is None:
                without_refs += 1
                continue
            if path is None:
                items = list(refs.items())
            else:
                found_text = refs.get(path)
                items = [] if found_text is None else [(path, found_text)]
            if len(items) > self.backfill_budget:
                exhausted = True
                break
            self.backfill_budget -= len(items)
            for ref_path, text in items:
                if self.supports(site.excerpt, text).ok:
                    candidates.append((inv.id, ref_path, text))
            if len(candidates) > 1:
                break
        if len(candidates) == 1 and not exhausted:
            found = candidates[0]
            if "backfill.unique_match" in self.severity:
                msg = f"{missing} missing; back-filled from the only match, invocation {found[0]} {found[1]}"
                self.warnings.append(
                    GatekeeperIssue(site.claim_id, site.index, "backfill.unique_match", Severity.NONE, msg)
                )
            return found, False
        if exhausted:
            why = "(the back-fill comparison budget being spent) no unique invocation ref"
        else:
            why = "no invocation ref" if not candidates else "several invocation refs"
        extra = f" ({without_refs} {site.tool} invocation(s) have no evidence_refs)" if without_refs else ""
        where = f", raw_path {path!r}" if path else ""
        msg = (
            f"{missing} missing and {why} of this session match tool_name {site.tool!r}{where} "
            f"and the excerpt{extra}; cannot back-fill"
        )
        return None, self.fail("backfill.unique_match", site, msg)

    def tool_index(self) -> dict[str, list[InvocationFacts]]:
        """Invocations by tool name, built on first need (only back-fills use it)."""
        if self._by_tool is None:
            self._by_tool = {}
            for inv in self.by_id.values():
                self._by_tool.setdefault(inv.tool_name, []).append(inv)
        return self._by_tool

    def record(
        self, site: _Site, inv_id: int | None, path: str, text: str, *, failed: bool, backfilled: bool = False
    ) -> None:
        status = _FAIL if failed else _PASS
        self.checked.append(
            CheckedBinding(site.claim_id, site.index, site.tool, inv_id, path, text, status, backfilled)
        )
        if text and not failed:
            self.verified.setdefault(site.claim_id, []).append(VerifiedBinding(site.excerpt, text))
