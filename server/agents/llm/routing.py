"""Where the model is asked, with `planner_anchor = offline` (docs/design.md §2.2): where code is
weak, not where it is strong.

Code reads the service, alert name, log term, level and window off a question and writes claims
that quote the evidence word for word; a small model asked to redo that work loses answers code
had right and costs minutes on a CPU. So each stage asks the model only when code has a gap:
- the Planner, when code reads no call off the question, or names a service it cannot resolve;
- the Executor, when no planned call came back with supporting evidence (the model may then call
  other tools and writes the claims); otherwise the offline Executor quotes what was found, and
  states the no-evidence results beside it as code does;
- the Verifier is always asked, but its REJECT of claims code wrote and verified is a recorded
  disagreement, not the verdict (code's stands).
A stage that code handles carries a `by_code` note saying why, so that no result code earned is
counted as the model's.
"""

from __future__ import annotations

from collections.abc import Sequence

from evigate.rules.enums import ToolName
from evigate.server.agents.base import BY_CODE, CLAIMS_BY, JSON
from evigate.server.tools.calls import ToolCallResult

VERIFIER_DISAGREEMENT = "verifier_disagreement"
__all__ = ["BY_CODE", "CLAIMS_BY", "VERIFIER_DISAGREEMENT", "evidence_gap", "plan_gap"]


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
