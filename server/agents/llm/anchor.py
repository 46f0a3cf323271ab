"""The planned calls of an LLM plan, anchored on the calls code reads off the question
(docs/design.md §2.2).

Reading the service, alert name, log term, level and window out of a question is deterministic
work the offline planner does without a model (server.understanding.entities). A weak model
asked to do it too often drops the service filter or picks the wrong tool, and the first result it
is shown then decides its claims. So with `planner_anchor = offline` the code's calls come first,
the model's own calls are added after them, and a model call that only loosens a code call (same
tool, a strict subset of its parameters: the service or the keyword dropped) is left out, as the
plan rules forbid widening a query.
"""

from __future__ import annotations

from collections.abc import Sequence

from evigate.server.agents.base import JSON, StageNote

CALLS_FROM_CODE = "calls_from_code"


def _keys(call: JSON) -> frozenset[str]:
    arguments = call.get("arguments")
    return frozenset(arguments) if isinstance(arguments, dict) else frozenset()


def widens(call: JSON, code_calls: Sequence[JSON]) -> bool:
    """Whether `call` is a code call of the same tool with some of its filters dropped and the
    others as they were (another keyword without the level is a new query, not a looser one)."""
    keys = _keys(call)
    arguments = call.get("arguments") or {}
    return any(
        code.get("tool_name") == call.get("tool_name")
        and keys < _keys(code)
        and all(code["arguments"].get(key) == arguments.get(key) for key in keys)
        for code in code_calls
    )


def anchored_calls(
    code_calls: Sequence[JSON], model_calls: Sequence[JSON], limit: int
) -> tuple[list[JSON], StageNote]:
    """The code's calls, then the model's other calls (no repeat, no widening), at most `limit`
    (the code's own are never cut), and a note saying how the list was made."""
    calls = [dict(call) for call in code_calls]
    added = dropped = 0
    for call in model_calls:
        if call in calls:
            continue
        if widens(call, code_calls):
            dropped += 1
            continue
        if len(calls) < limit:
            calls.append(dict(call))
            added += 1
    detail = f"{len(code_calls)} call(s) read off the question by code; the model added {added}" + (
        f"; {dropped} call(s) that only loosened a code call left out" if dropped else ""
    )
    return calls, StageNote(CALLS_FROM_CODE, detail)
