"""Where the model is asked, with `planner_anchor = offline` (docs/design.md §2.2): where code is
weak, not where it is strong.

Code reads the service, alert name, log term, level and window off a question and writes claims
that quote the evidence word for word; a small model asked to redo that work loses answers code
had right and costs minutes on a CPU. So each stage asks the model only when code has a gap:
- the Planner, when code reads no call off the question, or names a service it cannot resolve;
- for more calls (its Planner prompt), when no planned call came back with supporting evidence, or
  when some did but the evidence ranks low against the question: the question's own log term
  found nothing, or no metric discovery found matched its words. It may add calls (another term,
  as logs write it; a metric among the discovered names), which code runs and quotes beside its
  own claims (server.agents.llm.follow_up);
- the Executor, when still no call found supporting evidence: the model may then call other
  tools (list_services among them) and writes the claims; otherwise the offline Executor quotes
  what was found, and states the no-evidence results beside it as code does;
- the Verifier: its REJECT of claims code wrote and verified is a recorded disagreement, not the
  verdict (code's stands); so when code's check passes every such claim it is not asked at all;
- the Composer (server.pipeline.compose_stage), when some allowed claim states what was found or
  a hypothesis is allowed: absences alone have one wording, which code writes.
A stage that code handles carries a `by_code` note saying why, so that no result code earned is
counted as the model's.
"""

from __future__ import annotations

from collections.abc import Sequence

from evigate.rules.enums import ToolName
from evigate.server.agents.base import BY_CODE, CLAIMS_BY, JSON
from evigate.server.tools.calls import ToolCallResult

VERIFIER_DISAGREEMENT = "verifier_disagreement"
__all__ = [
    "BY_CODE",
    "CLAIMS_BY",
    "VERIFIER_DISAGREEMENT",
    "discovered_metrics",
    "evidence_gap",
    "low_evidence",
    "plan_gap",
]


def plan_gap(code_calls: Sequence[JSON]) -> str | None:
    """Why the model should add to the calls code read off the question, or None when code's
    plan is complete on its own."""
    if not code_calls:
        return "code read no call off the question"
    if any(call.get("tool_name") == ToolName.LIST_SERVICES for call in code_calls):
        return "the question names a service code could not resolve"
    return None


def evidence_gap(results: Sequence[ToolCallResult]) -> str | None:
    """Why the model should write the claims (and may call more tools), or None when a planned
    call came back with evidence the offline Executor can quote."""
    if not results:
        return "no planned call ran"
    if any(r.status == "success" and _status(r) == "supported" for r in results):
        return None
    tools = ", ".join(dict.fromkeys(r.tool_name for r in results))
    return f"no planned call found supporting evidence ({tools})"


def _status(result: ToolCallResult) -> str:
    return str(result.retrieval_details.get("evidence_status") or "")


def low_evidence(results: Sequence[ToolCallResult]) -> str | None:
    """Why code's evidence ranks low against the question though a call found some, or None: a
    log query for a term read off the question found nothing, or no metric of the service that
    discovery found shares a word with the question. (A survey's level check that found nothing
    is an answer, not a gap.)"""
    for result in results:
        if result.status != "success" or _status(result) == "supported":
            continue
        arguments = result.arguments
        term = arguments.get("keyword") or arguments.get("pattern") or arguments.get("query")
        if result.tool_name == ToolName.QUERY_LOGS and term:
            return f"the question's own term found nothing (query_logs {_shown(arguments)})"
        if (
            result.tool_name == ToolName.QUERY_PROMQL
            and "about" in arguments
            and discovered_metrics([result])
        ):
            service = arguments.get("service", "")
            return f"no metric discovered for {service} matched the question's words"
    return None


def discovered_metrics(results: Sequence[ToolCallResult]) -> list[str]:
    """The metric names discovery found for the services queried (query_promql's `about` mode)."""
    names: list[str] = []
    for result in results:
        found = (
            (result.raw_result or {}).get("discovered") if result.tool_name == ToolName.QUERY_PROMQL else None
        )
        names += [str(name) for name in found or [] if str(name) not in names]
    return names


def _shown(arguments: dict[str, object]) -> str:
    return " ".join(f"{key}={value}" for key, value in arguments.items())
