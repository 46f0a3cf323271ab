"""The words that cross module boundaries: statuses, levels, severities, verdicts, names.

Each is a StrEnum whose values are exactly the words stored in the database, written to JSON and
mapped by the codec, so a member compares equal to its word and serializes as it: stored data,
golden files and the wire contract are unchanged. They live here, in the bottom layer, because the
rules read them and every other layer may import rules.
"""

from __future__ import annotations

from enum import StrEnum


class CallStatus(StrEnum):
    """tool_invocation.status: did the tool run and answer?"""

    SUCCESS = "success"
    FAILED = "failed"


class EvidenceStatus(StrEnum):
    """retrieval_details.evidence_status (docs/design.md §6.3)."""

    SUPPORTED = "supported"
    NO_EVIDENCE = "no_evidence"
    DEDUPED = "deduped"
    FAILED = "failed"


class MatchLevel(StrEnum):
    """retrieval_details.match_level: L0 exact, L1 semantic, none (docs/design.md §6.3, §5.5)."""

    L0 = "L0"
    L1 = "L1"
    NONE = "none"


class Severity(StrEnum):
    """A Gatekeeper rule's severity, and the worst of a result's failures."""

    NONE = "none"
    LOW_CONFID = "low_confid"
    REJECT = "reject"


class CheckStatus(StrEnum):
    """GatekeeperResult.status and a checked binding's status."""

    PASS = "pass"
    FAIL = "fail"


class Verdict(StrEnum):
    """The Verifier's verdict label (docs/design.md §5.2)."""

    PASS = "PASS"
    LOW_CONFID = "LOW_CONFID"
    REJECT = "REJECT"


class SessionStatus(StrEnum):
    """diagnosis_session.status."""

    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    AGENT = "AGENT"  # an outside agent's evidence tool calls (server.usecases.agent_queries)


class ClaimType(StrEnum):
    """executor_evidence_v2 claim_type (docs/design.md §2.3)."""

    OBSERVATION = "observation"
    NEGATIVE_OBSERVATION = "negative_observation"
    SYMPTOM = "symptom"
    ROOT_CAUSE = "root_cause"


class ToolName(StrEnum):
    """The built-in tools. The tool registry may hold others, so a field that holds any tool's
    name is typed `str`; code that means one built-in tool says so with a member."""

    QUERY_METRICS = "query_metrics"
    QUERY_LOGS = "query_logs"
    LOOKUP_KNOWLEDGE = "lookup_knowledge"
    QUERY_PROMQL = "query_promql"
    SUMMARIZE_LOGS = "summarize_logs"
    LIST_SERVICES = "list_services"
    QUERY_K8S = "query_k8s"
    QUERY_K8S_EVENTS = "query_k8s_events"
    K8S_ROLLOUT_HISTORY = "k8s_rollout_history"


class SentenceKind(StrEnum):
    """What one sentence of a structured answer does (the contract's AnswerSentenceKind)."""

    HEADLINE = "headline"  # the one line that answers the question
    FINDING = "finding"  # states what a tool result showed
    ABSENCE = "absence"  # says a query found nothing
    COULD_NOT_CHECK = "could_not_check"  # says a check could not run
    HYPOTHESIS = "hypothesis"  # an unconfirmed direction, marked as such
    STEP = "step"  # one step of a procedure (a runbook's)
    NOTE = "note"  # a connective line: a fixed line composed by code, or a remark on a claim
