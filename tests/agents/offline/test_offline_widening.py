"""No hidden windows: a survey's log check that found nothing in the last hour looks further back."""

from __future__ import annotations

from evigate.rules.enums import EvidenceStatus, ToolName
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.widening import widen, widenable
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from tests.agents.offline.fakes import FakeToolBox


def _survey(service: str) -> PlannedCall:
    arguments = {"service": service, "level": "ERROR", "since": "1h"}
    return PlannedCall(ToolName.QUERY_LOGS, arguments, service, level="ERROR", purpose="survey")


async def _run(tools: FakeToolBox, call: PlannedCall) -> ToolCallResult:
    return await tools.call(call.tool_name, call.arguments, Deadline.after(10))


async def test_an_hours_old_error_is_found_in_the_first_wider_window_and_the_call_says_which() -> None:
    tools = FakeToolBox()
    call = _survey("api-gateway")  # its ERROR line is 70 minutes old
    first = await _run(tools, call)
    assert widenable(call, first, asked_window=False)
    kept, result = await widen(call, first, lambda wider: _run(tools, wider))
    assert kept.arguments["since"] == "6h" and kept.window_minutes == 360
    assert c.outcome(result, c.refs_of(result)) == EvidenceStatus.SUPPORTED
    assert [args.get("since") for _, args in tools.calls] == ["1h", "6h"]


async def test_nothing_anywhere_is_said_for_all_of_time() -> None:
    tools = FakeToolBox()
    call = _survey("payment-service")  # WARN lines only
    kept, result = await widen(call, await _run(tools, call), lambda wider: _run(tools, wider))
    assert "since" not in kept.arguments
    assert c.outcome(result, c.refs_of(result)) == EvidenceStatus.NO_EVIDENCE
    assert [args.get("since") for _, args in tools.calls] == ["1h", "6h", "24h", None]


async def test_a_window_the_question_names_or_a_narrow_question_is_never_widened() -> None:
    tools = FakeToolBox()
    call = _survey("payment-service")
    result = await _run(tools, call)
    assert not widenable(call, result, asked_window=True)
    narrow = PlannedCall(ToolName.QUERY_LOGS, dict(call.arguments), "payment-service")
    assert not widenable(narrow, result, asked_window=False)


async def test_a_failed_check_is_not_widened() -> None:
    tools = FakeToolBox(fail_tools={"query_logs"})
    call = _survey("api-gateway")
    assert not widenable(call, await _run(tools, call), asked_window=False)


def test_an_alert_query_about_this_moment_is_not_widened_one_about_an_ending_is() -> None:
    from evigate.server.agents.offline.widening import asks_now_only

    assert asks_now_only("Is PodRestart firing on payment-service right now?")
    assert asks_now_only("payment-service 现在有 HighErrorRate 告警吗？")
    assert not asks_now_only("Is OrderRouter's JavaHeapUsageHigh alert still firing?")
    assert not asks_now_only("Did the LedgerSyncTaskFailures alert resolve?")
    assert not asks_now_only("hotel-inventory 早上的错误率告警现在还在吗？")


def _result(call: PlannedCall, found: dict[str, str] | None, missing: str) -> ToolCallResult:
    """The call's result: the ref `found`, or no evidence said as `missing`."""
    ref = found or {"raw_path": "$.no_evidence", "text": missing}
    status = "supported" if found else "no_evidence"
    details = {"evidence_status": status, "match_level": "L0", "evidence_refs": [ref]}
    return ToolCallResult(601, call.tool_name, dict(call.arguments), "success", None, {}, details)


def _patterns_result(call: PlannedCall, found: bool) -> ToolCallResult:
    pattern = {"raw_path": "$.patterns[0]", "text": "Environment variable <*> is undefined (count=4)"}
    return _result(call, pattern if found else None, "no log patterns at WARN and above")


def test_a_survey_that_found_no_levelled_line_anywhere_reads_every_level_once() -> None:
    from evigate.server.agents.offline.widening import every_level

    # after widening: no `since` left, nothing at WARN and above in all the logs
    call = PlannedCall("summarize_logs", {"service": "relay-7", "level": "WARN"}, "relay-7", purpose="survey")
    again = every_level(call, _patterns_result(call, found=False))
    assert again is not None and again.arguments == {"service": "relay-7"} and again.level is None
    # found something, still inside its window, not a survey, or already at every level: no second check
    assert every_level(call, _patterns_result(call, found=True)) is None
    windowed = PlannedCall("summarize_logs", {**call.arguments, "since": "1h"}, "relay-7", purpose="survey")
    assert every_level(windowed, _patterns_result(windowed, found=False)) is None
    narrow = PlannedCall("summarize_logs", dict(call.arguments), "relay-7")
    assert every_level(narrow, _patterns_result(narrow, found=False)) is None
    assert every_level(again, _patterns_result(again, found=False)) is None
    # "which services log errors?": the level was asked
    assert every_level(call, _patterns_result(call, found=False), asked_level=True) is None


def test_a_survey_over_the_day_the_question_named_reads_every_level_of_that_day() -> None:
    from evigate.server.agents.offline.widening import every_level

    # "did billing-db have problems today?": the window is the question's, never widened; a day of
    # lines that carry no level above INFO is still read, over that day
    arguments = {"service": "relay-7", "level": "WARN", "since": "today", "until": "now"}
    call = PlannedCall("summarize_logs", arguments, "relay-7", purpose="survey")
    again = every_level(call, _patterns_result(call, found=False), asked_window=True)
    assert again is not None and again.level is None
    assert again.arguments == {"service": "relay-7", "since": "today", "until": "now"}


def _lines_result(call: PlannedCall, found: bool) -> ToolCallResult:
    line = {
        "raw_path": "$.logs[0]",
        "text": "2026-12-01 10:28:00 ERROR profile-store OOM command not allowed",
    }
    return _result(call, line if found else None, "未找到匹配的日志")


def test_a_service_with_no_line_at_the_asked_level_is_asked_for_its_rare_severe_events() -> None:
    """ "Does X log errors?" found no ERROR line: X's rare severe events below that level (Redis's
    failed fork for want of memory, logged as a warning) are what the question is about too, and
    summarize_logs at that level lists them (it finds those below its level by their words)."""
    from evigate.server.agents.offline.widening import rare_severe

    arguments = {"service": "profile-store", "level": "ERROR", "since": "today"}
    call = PlannedCall(ToolName.QUERY_LOGS, arguments, "profile-store", level="ERROR")
    available = {ToolName.QUERY_LOGS, "summarize_logs"}
    severe = rare_severe(call, _lines_result(call, found=False), available)
    assert severe is not None and severe.tool_name == "summarize_logs"
    assert severe.arguments == arguments and severe.level == "ERROR" and severe.service == "profile-store"
    # found its lines; searched a term; no level, no service; a survey's own check; no such tool: none
    assert rare_severe(call, _lines_result(call, found=True), available) is None
    keyword = {**arguments, "keyword": "timeout"}
    term = PlannedCall(ToolName.QUERY_LOGS, keyword, "profile-store", level="ERROR")
    assert rare_severe(term, _lines_result(term, found=False), available) is None
    for other in (
        PlannedCall(ToolName.QUERY_LOGS, {"service": "profile-store"}, "profile-store"),
        PlannedCall(ToolName.QUERY_LOGS, {"level": "ERROR"}, level="ERROR"),
        PlannedCall(ToolName.QUERY_LOGS, arguments, "profile-store", level="ERROR", purpose="survey"),
    ):
        assert rare_severe(other, _lines_result(other, found=False), available) is None
    assert rare_severe(call, _lines_result(call, found=False), {ToolName.QUERY_LOGS}) is None
