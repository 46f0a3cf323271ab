"""Plain data crossing the rules boundary: facts in, frozen results out.

Every result has `to_seed()`, returning the JSON-able dict in the shape of the source documents
(snake_case keys, lowercase enum words) that storage and the codec exchange.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from evigate.rules.enums import CheckStatus, EvidenceStatus, MatchLevel, Severity, Verdict

SEVERITY_RANK: Mapping[Severity, int] = {Severity.NONE: 0, Severity.LOW_CONFID: 1, Severity.REJECT: 2}


@dataclass(frozen=True, slots=True)
class EvidenceRef:
    """One entry of `retrieval_details.evidence_refs`."""

    raw_path: str
    text: str


def parse_evidence_refs(retrieval_details: Any) -> tuple[EvidenceRef, ...] | None:
    """The evidence refs of a stored `retrieval_details`: the one parser every reader uses.

    None when the row has no `evidence_refs` list (stored before refs existed, or malformed); an
    entry without a string raw_path and text is skipped, since nothing could be matched against it.
    """
    refs_data = retrieval_details.get("evidence_refs") if isinstance(retrieval_details, Mapping) else None
    if not isinstance(refs_data, list):
        return None
    return tuple(
        EvidenceRef(r["raw_path"], r["text"])
        for r in refs_data
        if isinstance(r, Mapping) and isinstance(r.get("raw_path"), str) and isinstance(r.get("text"), str)
    )


@dataclass(frozen=True, slots=True)
class InvocationFacts:
    """What the Gatekeeper knows about one tool_invocation row of the session.

    `evidence_refs` is None when the row was stored before evidence refs existed (or without them).
    """

    id: int
    tool_name: str
    evidence_refs: tuple[EvidenceRef, ...] | None

    @classmethod
    def from_seed(cls, id: int, tool_name: str, retrieval_details: Any) -> InvocationFacts:
        """Build from a stored row; a missing or malformed `evidence_refs` list reads as None."""
        return cls(id, tool_name, parse_evidence_refs(retrieval_details))


@dataclass(frozen=True, slots=True)
class ScoreFacts:
    """The tool_invocation facts the evidence score reads (docs/design.md §5.5)."""

    tool_name: str
    status: str  # a CallStatus word; any other word reads as not successful
    evidence_status: str  # an EvidenceStatus word
    match_level: str  # a MatchLevel word

    @classmethod
    def from_seed(cls, tool_name: str, status: str, retrieval_details: Any) -> ScoreFacts:
        details = retrieval_details if isinstance(retrieval_details, Mapping) else {}
        evidence_status = details.get("evidence_status")
        match_level = details.get("match_level")
        return cls(
            tool_name,
            status,
            evidence_status if isinstance(evidence_status, str) else EvidenceStatus.FAILED,
            match_level if isinstance(match_level, str) else MatchLevel.NONE,
        )


# --- Gatekeeper results -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    description: str
    enabled: bool
    default_severity: Severity

    def to_seed(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "description": self.description,
            "enabled": self.enabled,
            "default_severity": self.default_severity,
        }


@dataclass(frozen=True, slots=True)
class GatekeeperIssue:
    """One failure (an error) or note (a warning); binding_index is None for claim/output-level issues."""

    claim_id: str
    binding_index: int | None
    rule_id: str
    severity: Severity
    message: str

    def to_seed(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "binding_index": self.binding_index,
            "rule_id": self.rule_id,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class CheckedBinding:
    claim_id: str
    binding_index: int
    tool_name: str
    source_invocation_id: int | None
    raw_path: str
    matched_text: str
    status: CheckStatus
    backfilled: bool

    def to_seed(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "tool_name": self.tool_name,
            "source_invocation_id": self.source_invocation_id,
            "raw_path": self.raw_path,
            "matched_text": self.matched_text,
            "status": self.status,
            "binding_index": self.binding_index,
            "backfilled": self.backfilled,
        }


class VerifiedBinding(NamedTuple):
    """A binding that passed every check: the excerpt and the ref text it was matched against."""

    excerpt: str
    matched_text: str


@dataclass(frozen=True)
class GatekeeperOutcome:
    status: CheckStatus
    severity: Severity
    rule_set_version: str
    rules: tuple[RuleInfo, ...]
    checked_bindings: tuple[CheckedBinding, ...]
    failed_rules: tuple[str, ...]
    warnings: tuple[GatekeeperIssue, ...]
    errors: tuple[GatekeeperIssue, ...]
    # claim_id → the claim's verified bindings, in binding order (claims without any are absent).
    verified_bindings: Mapping[str, tuple[VerifiedBinding, ...]] = field(default_factory=dict)

    def to_seed(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "severity": self.severity,
            "rule_set_version": self.rule_set_version,
            "rules": [r.to_seed() for r in self.rules],
            "checked_bindings": [b.to_seed() for b in self.checked_bindings],
            "failed_rules": list(self.failed_rules),
            "warnings": [w.to_seed() for w in self.warnings],
            "errors": [e.to_seed() for e in self.errors],
        }


# --- Evidence score -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoreFactor:
    name: str
    delta: int
    description: str

    def to_seed(self) -> dict[str, Any]:
        return {"name": self.name, "delta": self.delta, "description": self.description}


@dataclass(frozen=True, slots=True)
class EvidenceScoreResult:
    evidence_score: int
    factors: tuple[ScoreFactor, ...]
    source: str = "rule"

    def to_seed(self) -> dict[str, Any]:
        return {
            "evidence_score": self.evidence_score,
            "source": self.source,
            "factors": [f.to_seed() for f in self.factors],
            "llm_opinion": None,
        }


# --- Verdict and guard --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerdictDecision:
    verdict: Verdict
    overridden: bool
    reason: str

    def to_seed(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "overridden": self.overridden, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class GuardFinding:
    """One over-statement of negative evidence in a user-facing text.

    `start`/`end` delimit `sentence` in the scanned text; `claim_id` is the negative_observation
    claim the sentence concerns (None when no such claim was given or none relates to it).
    """

    sentence: str
    start: int
    end: int
    phrase: str
    language: str  # "zh" | "en"
    claim_id: str | None
    subject: str
    safe_phrasing: str
    scope: str = ""  # where the claim's query looked (rules.guard.SCOPES), "" when not known

    def to_seed(self) -> dict[str, Any]:
        return {
            "sentence": self.sentence,
            "start": self.start,
            "end": self.end,
            "phrase": self.phrase,
            "language": self.language,
            "claim_id": self.claim_id,
            "subject": self.subject,
            "safe_phrasing": self.safe_phrasing,
        }
