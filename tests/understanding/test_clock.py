"""Windows given as a time of day or a part of the day, read from the question and resolved by the
tools against their now."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evigate.server.agents.offline.calls import plan_calls
from evigate.server.tools.args import window
from evigate.server.understanding.clock import clock_window
from evigate.server.understanding.entities import extract

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What went wrong with transcoder around 06:30?", ("06:00", "07:00")),
        ("What happened to invoice-runner at 3am?", ("02:30", "03:30")),
        ("errors at 3:15 pm?", ("14:45", "15:45")),
        ("transcoder 早上六点半左右出了什么问题？", ("06:00", "07:00")),
        ("invoice-runner 凌晨三点出了什么问题？", ("02:30", "03:30")),
        ("hotel-inventory 今天早上 7 点多是不是出过 500？", ("today 07:00", "08:00")),
        ("下午3点15分有报错吗", ("14:45", "15:45")),
        ("Did auth-broker log errors last night?", ("18:00", "06:00")),
        ("auth-broker 昨晚有什么报错？", ("18:00", "06:00")),
        ("It failed on August 2, 2025 around 13:45 UTC.", ("2025-08-02T13:15:00Z", "2025-08-02T14:15:00Z")),
        ("在 2025 年 8 月 2 日 13:45 UTC 左右出了问题", ("2025-08-02T13:15:00Z", "2025-08-02T14:15:00Z")),
        ("从 6 月 12 日 10 点以来有哪些错误", None),
        ("Any 500 errors in the last 2 hours?", None),
        ("p99 is 4.8 s on 2.15.0", None),
        ("能不能快一点查到原因", None),
    ],
)
def test_a_time_of_day_in_the_question_is_a_window(question: str, expected: tuple[str, str] | None) -> None:
    assert clock_window(question) == expected


def test_a_time_of_day_is_queried_as_asked_and_is_no_search_term() -> None:
    entities = extract("Did auth-broker log errors last night?", ["auth-broker"])
    assert entities.names_window and not entities.log_terms
    (call,) = plan_calls(entities, "Did auth-broker log errors last night?")
    assert (call.arguments["since"], call.arguments["until"]) == ("18:00", "06:00")


@pytest.mark.parametrize(
    ("since", "until", "start", "end"),
    [
        ("06:00", "07:00", datetime(2026, 12, 1, 6, 0, tzinfo=UTC), datetime(2026, 12, 1, 7, 0, tzinfo=UTC)),
        ("18:00", "06:00", datetime(2026, 11, 30, 18, tzinfo=UTC), datetime(2026, 12, 1, 6, tzinfo=UTC)),
        (
            "11:30",
            "12:30",
            datetime(2026, 12, 1, 11, 30, tzinfo=UTC),
            datetime(2026, 12, 1, 12, 30, tzinfo=UTC),
        ),
        ("13:00", "14:00", datetime(2026, 11, 30, 13, tzinfo=UTC), datetime(2026, 11, 30, 14, tzinfo=UTC)),
    ],
)
def test_the_tools_read_a_time_of_day_as_the_latest_one(
    since: str, until: str, start: datetime, end: datetime
) -> None:
    assert (
        window({"since": since, "until": until}, NOW).since,
        window({"since": since, "until": until}, NOW).until,
    ) == (start, end)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Did the billing job fail today?", ("today", "now")),
        ("Any problems with the cart this morning?", ("today 00:00", "12:00")),
        ("What broke this afternoon?", ("today 12:00", "18:00")),
        ("Were there errors yesterday?", ("yesterday", "00:00")),
        ("What happened to search yesterday evening?", ("yesterday 18:00", "00:00")),
        ("The api pod had issues yesterday around 14:30 UTC.", ("yesterday 14:00", "15:00")),
        ("Did the importer crash last Tuesday?", ("tuesday", "00:00")),
        ("Show me the importer's logs since last Tuesday", ("tuesday", "now")),
        ("Any errors since yesterday?", ("yesterday", "now")),
        ("给我看 importer 从上周二以来的日志", ("tuesday", "now")),
        ("errors on friday afternoon?", ("friday 12:00", "18:00")),
        ("What failed between 2 and 4 am?", ("02:00", "04:00")),
        ("errors from 22:00 to 02:00", ("22:00", "02:00")),
        ("Any timeouts on 2026-11-17?", ("2026-11-17T00:00:00Z", "2026-11-18T00:00:00Z")),
        ("cart 今天有报错吗？", ("today", "now")),
        ("cart 昨天下午出了什么问题？", ("yesterday 12:00", "18:00")),
        ("cart 早上的告警现在还在吗？", ("today 00:00", "12:00")),
        ("cart 上周四有没有超时？", ("thursday", "00:00")),
        ("cart 今早有报错吗", ("today 00:00", "12:00")),
        ("周五下午 cart 慢吗", ("friday 12:00", "18:00")),
        ("cart 凌晨 2 点到 4 点之间有报错吗？", ("02:00", "04:00")),
        ("cart 今天凌晨 4 点左右出了什么问题？", ("today 03:30", "04:30")),
        # no day: numbers and words that are no time
        ("Is the error rate between 2 and 4 percent?", None),
        ("Did someone say good morning to the bot?", None),
    ],
)
def test_a_day_or_a_part_of_it_in_the_question_is_a_window(
    question: str, expected: tuple[str, str] | None
) -> None:
    assert clock_window(question) == expected


@pytest.mark.parametrize(
    ("since", "until", "start", "end"),
    [
        ("today", "now", datetime(2026, 12, 1, tzinfo=UTC), NOW),
        ("yesterday", "00:00", datetime(2026, 11, 30, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)),
        (
            "yesterday 18:00",
            "00:00",
            datetime(2026, 11, 30, 18, tzinfo=UTC),
            datetime(2026, 12, 1, tzinfo=UTC),
        ),
        ("today 00:00", "12:00", datetime(2026, 12, 1, tzinfo=UTC), datetime(2026, 12, 1, 12, tzinfo=UTC)),
        # 2026-12-01 is a Tuesday: "last Tuesday" is the one before, "monday" yesterday
        ("tuesday", "00:00", datetime(2026, 11, 24, tzinfo=UTC), datetime(2026, 11, 25, tzinfo=UTC)),
        (
            "monday 12:00",
            "18:00",
            datetime(2026, 11, 30, 12, tzinfo=UTC),
            datetime(2026, 11, 30, 18, tzinfo=UTC),
        ),
    ],
)
def test_the_tools_read_a_day_from_their_now(since: str, until: str, start: datetime, end: datetime) -> None:
    span = window({"since": since, "until": until}, NOW)
    assert (span.since, span.until) == (start, end)


def test_a_day_is_queried_as_asked_and_is_no_search_term() -> None:
    question = "Did billing-worker log errors yesterday evening?"
    entities = extract(question, ["billing-worker"])
    assert entities.names_window and not entities.log_terms
    (call,) = plan_calls(entities, question)
    assert (call.arguments["since"], call.arguments["until"]) == ("yesterday 18:00", "00:00")
