"""No hidden windows: a survey's log check that found nothing in its default window looks further back.

A broad question that names no time ("what's wrong with X?") is first checked over the last hour.
When a log check finds nothing there, the problem may be hours old: the same check runs again over
6 hours, 24 hours and then everything the files hold, and stops at the first window that finds
something. The call that is kept (and cited) carries the window it ran with, so the answer says
which window a finding comes from, and a check that found nothing anywhere says so for all of time.
A window the question names is never widened: it is what was asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from evigate.rules.enums import EvidenceStatus, ToolName
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, PlannedCall
from evigate.server.tools.calls import ToolCallResult

# The windows tried after the default one, in order; None: no `since`, all that the files hold.
WIDER = ("6h", "24h", None)
WIDENED_TOOLS = frozenset({SUMMARIZE_LOGS, ToolName.QUERY_LOGS})
# The window in minutes of each step, for the claim's wording.
_MINUTES = {"6h": 360, "24h": 1440}

Run = Callable[[PlannedCall], Awaitable[ToolCallResult]]


def widenable(call: PlannedCall, result: ToolCallResult, asked_window: int | None) -> bool:
    """A survey's log check over its default window that ran and found nothing."""
    if asked_window is not None or call.purpose != "survey" or call.tool_name not in WIDENED_TOOLS:
        return False
    if "since" not in call.arguments:
        return False
    return c.outcome(result, c.refs_of(result)) == EvidenceStatus.NO_EVIDENCE


def wider(call: PlannedCall, since: str | None) -> PlannedCall:
    arguments = {k: v for k, v in call.arguments.items() if k != "since"}
    if since is not None:
        arguments["since"] = since
    return replace(call, arguments=arguments, window_minutes=_MINUTES.get(since) if since else None)


async def widen(call: PlannedCall, result: ToolCallResult, run: Run) -> tuple[PlannedCall, ToolCallResult]:
    """The first wider window that finds something, else the widest one tried (all of time); a
    failed call stops the widening and is kept as it is (could not check, never nothing found)."""
    for since in WIDER:
        call = wider(call, since)
        result = await run(call)
        if c.outcome(result, c.refs_of(result)) != EvidenceStatus.NO_EVIDENCE:
            break
    return call, result
