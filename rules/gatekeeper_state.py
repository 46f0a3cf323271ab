"""The state of one Gatekeeper check (rules.gatekeeper): the invocations indexed by id and their
refs by raw_path, the catalog's switches and limits, and what has been found so far — with how a
finding and a checked binding are recorded. The checks themselves build on it
(rules.gatekeeper_citations, rules.gatekeeper)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules import text as txt
from evigate.rules import verbatim
from evigate.rules.enums import CheckStatus, ClaimType, Severity
from evigate.rules.rule_catalog import RuleCatalog
from evigate.rules.types import (
    SEVERITY_RANK,
    CheckedBinding,
    GatekeeperIssue,
    GatekeeperOutcome,
    InvocationFacts,
    VerifiedBinding,
)

NEGATIVE = ClaimType.NEGATIVE_OBSERVATION
# Enum members read once: an attribute lookup on an enum class costs more than the fast path's work.
_PASS, _FAIL, _WARN_ONLY = CheckStatus.PASS, CheckStatus.FAIL, Severity.NONE
# Ids, tool names and paths are short; longer ones are rejected before they reach any message.
MAX_NAME = 200


class Site:
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


def describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class RunState:
    """State of one check: indexes, the rule switches, and what has been found so far."""

    def __init__(self, catalog: RuleCatalog, invocations: Sequence[InvocationFacts]) -> None:
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

    def fail(self, rule_id: str, site: Site, message: str) -> bool:
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

    def supports(self, excerpt: str, text: str) -> verbatim.Support:
        """Whether a ref text supports an excerpt word for word (rules.verbatim)."""
        if txt.quotes_cleanly(excerpt, text):  # an exact quote: only a left-out negation can fail it
            if self.negations is None:
                return verbatim.SUPPORTED
            negation = verbatim.quoted_negation(text, text.find(excerpt), self.negations)
            return verbatim.Support(negation=negation) if negation else verbatim.SUPPORTED
        return verbatim.support(excerpt, text, self.negations)

    def tool_index(self) -> dict[str, list[InvocationFacts]]:
        """Invocations by tool name, built on first need (only back-fills use it)."""
        if self._by_tool is None:
            self._by_tool = {}
            for inv in self.by_id.values():
                self._by_tool.setdefault(inv.tool_name, []).append(inv)
        return self._by_tool

    def record(
        self, site: Site, inv_id: int | None, path: str, text: str, *, failed: bool, backfilled: bool = False
    ) -> None:
        status = _FAIL if failed else _PASS
        self.checked.append(
            CheckedBinding(site.claim_id, site.index, site.tool, inv_id, path, text, status, backfilled)
        )
        if text and not failed:
            self.verified.setdefault(site.claim_id, []).append(VerifiedBinding(site.excerpt, text))
