"""No hidden windows: a check that found nothing in its default window looks further back.

A broad question that names no time ("what's wrong with X?") is first checked over the last hour.
When a log check finds nothing there, the problem may be hours old: the same check runs again over
6 hours, 24 hours and then everything the files hold, and stops at the first window that finds
something. The call that is kept (and cited) carries the window it ran with, so the answer says
which window a finding comes from, and a check that found nothing anywhere says so for all of time.
An alert query without a window reads the last hour of alert history: it is widened to 6 and 24
hours the same way, so "did X resolve?" finds an alert that resolved this morning.
A survey's relevance ranking of the service's lines is widened the same way. A window the question
names is never widened: it is what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace

from evigate.rules.enums import EvidenceStatus, ToolName
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, PlannedCall
from evigate.server.agents.offline.relevance_calls import RELEVANCE
from evigate.server.tools.calls import ToolCallResult

# The windows tried after the default one, in order; None: no `since`, all that the files hold. An
# alert query without `since` already reads its source's default (the last hour): 24 h is its widest.
WIDER = ("6h", "24h", None)
ALERT_WIDER = ("6h", "24h")
WIDENED_TOOLS = frozenset({SUMMARIZE_LOGS, ToolName.QUERY_LOGS})
# The window in minutes of each step, for the claim's wording.
_MINUTES = {"6h": 360, "24h": 1440}

_ZH_NOW = ("现在", "当前", "目前", "此刻")
_ZH_LATER = ("还在", "还有", "恢复", "结束", "解除")

Run = Callable[[PlannedCall], Awaitable[ToolCallResult]]


def asks_now_only(question: str) -> bool:
    """ "Is X firing right now?" asks about this moment; "is it still firing?", "did it resolve?"
    ask about an alert that may have ended hours ago."""
    lowered = question.lower()
    now = re.search(r"\b(?:right now|now|currently)\b", lowered) or any(w in lowered for w in _ZH_NOW)
    later = re.search(r"\b(?:still|resolved?|recover(?:ed)?|ended|stopped)\b", lowered)
    return bool(now) and not later and not any(w in lowered for w in _ZH_LATER)


def widenable(call: PlannedCall, result: ToolCallResult, asked_window: bool, question: str = "") -> bool:
    """A survey's log check over its default window, or an alert query over its source's default
    (an alert resolved hours ago: "did it resolve?"), that ran and found nothing."""
    if asked_window:
        return False
    if call.tool_name == ToolName.QUERY_METRICS:
        default = "since" not in call.arguments and bool(call.arguments) and not asks_now_only(question)
    else:
        default = (
            call.purpose in ("survey", RELEVANCE)
            and call.tool_name in WIDENED_TOOLS
            and "since" in call.arguments
        )
    return default and c.outcome(result, c.refs_of(result)) == EvidenceStatus.NO_EVIDENCE


def wider(call: PlannedCall, since: str | None) -> PlannedCall:
    arguments = {k: v for k, v in call.arguments.items() if k != "since"}
    if since is not None:
        arguments["since"] = since
    return replace(call, arguments=arguments, window_minutes=_MINUTES.get(since) if since else None)


def every_level(
    call: PlannedCall, result: ToolCallResult, asked_level: bool = False, asked_window: bool = False
) -> PlannedCall | None:
    """Lines that carry no level (a bare `print`, a shell script, a server's start-up text) are read
    at INFO, so a survey's WARN-and-above patterns find nothing in logs that do say what went wrong.
    After a survey's pattern check found nothing at its level in all the logs (or in the window the
    question named: "today"), the same check at every level over the same window: the service's own
    most frequent lines, stated as what its logs hold. A level the question names ("which services
    log errors?") is what was asked, and stays."""
    if asked_level or call.tool_name != SUMMARIZE_LOGS or call.purpose != "survey":
        return None
    if "level" not in call.arguments:
        return None
    if ("since" in call.arguments and not asked_window) or c.outcome(
        result, c.refs_of(result)
    ) != EvidenceStatus.NO_EVIDENCE:
        return None
    arguments = {k: v for k, v in call.arguments.items() if k != "level"}
    return replace(call, arguments=arguments, level=None)


_TEXT_FILTERS = ("keyword", "pattern", "query")


def rare_severe(call: PlannedCall, result: ToolCallResult, available: Collection[str]) -> PlannedCall | None:
    """A question's own check of a service's lines at a level ("does X log errors?", "X 有报错吗")
    that found none: the service's rare severe events below that level (an out-of-memory failure
    Redis logs as a warning, a restart logged at INFO) answer it too. summarize_logs at the same
    level and window lists them (it finds those below its level by their words); it is kept only
    when it finds something."""
    arguments = call.arguments
    if call.tool_name != ToolName.QUERY_LOGS or call.purpose or SUMMARIZE_LOGS not in available:
        return None
    if "level" not in arguments or "service" not in arguments or any(k in arguments for k in _TEXT_FILTERS):
        return None
    if c.outcome(result, c.refs_of(result)) != EvidenceStatus.NO_EVIDENCE:
        return None
    return replace(call, tool_name=SUMMARIZE_LOGS, arguments=dict(arguments))


async def widen(call: PlannedCall, result: ToolCallResult, run: Run) -> tuple[PlannedCall, ToolCallResult]:
    """The first wider window that finds something, else the widest one tried (all of time); a
    failed call stops the widening and is kept as it is (could not check, never nothing found)."""
    for since in ALERT_WIDER if call.tool_name == ToolName.QUERY_METRICS else WIDER:
        call = wider(call, since)
        result = await run(call)
        if c.outcome(result, c.refs_of(result)) != EvidenceStatus.NO_EVIDENCE:
            break
    return call, result
