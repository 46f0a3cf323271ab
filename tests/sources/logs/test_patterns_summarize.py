"""summarize: templates ranked by count with their time range, levels and an example; the same
input always gives the same output; each pattern renders as one citable line."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from evigate.server.sources.logs.patterns import MinerSettings, Pattern, pattern_ref_text, summarize
from evigate.server.sources.logs.textformats import ParsedLine

START = datetime(2026, 1, 2, 9, 58, 1, tzinfo=UTC)


def event(seconds: int, level: str | None, message: str) -> ParsedLine:
    return ParsedLine(timestamp=START + timedelta(seconds=seconds), level=level, message=message)


def incident() -> list[ParsedLine]:
    rng = random.Random(3)
    events = []
    for i in range(6):
        level = "WARN" if i == 0 else "ERROR"
        events.append(
            event(
                i * 60,
                level,
                f"Connection is not available, request timed out after {rng.randint(1, 9) * 1000}ms",
            )
        )
    for i in range(3):
        events.append(event(30 + i, "INFO", f"Order {8000 + i} accepted from 10.0.0.{i + 1}"))
    events.append(event(100, "ERROR", "Payment gateway returned 503 for order 8841"))
    return sorted(events, key=lambda e: e.timestamp or START)


def test_templates_are_ranked_by_count_with_their_time_range_levels_and_example() -> None:
    patterns = summarize(incident())
    assert [(p.template, p.count) for p in patterns] == [
        ("Connection is not available, request timed out after <*>", 6),
        ("Order <*> accepted from <*>", 3),
        ("Payment gateway returned <*> for order <*>", 1),
    ]
    top = patterns[0]
    assert (top.first, top.last) == (START, START + timedelta(seconds=300))
    assert top.levels == ("ERROR", "WARN")
    assert top.example.startswith("Connection is not available, request timed out after ")
    assert patterns[1].levels == ("INFO",)


def test_equal_counts_rank_the_earliest_first_and_limit_keeps_the_top() -> None:
    events = [event(50, "INFO", "cache warmed in 12ms"), event(10, "INFO", "listening on port 8080")]
    patterns = summarize(events)
    assert [p.template for p in patterns] == ["listening on port <*>", "cache warmed in <*>"]
    assert summarize(events, limit=1) == patterns[:1]


def test_same_input_same_output_whatever_ran_before() -> None:
    first = summarize(incident())
    summarize([event(i, "INFO", f"unrelated job {i} at host-{i % 7}") for i in range(300)])
    assert summarize(incident()) == first


def test_words_that_differ_in_a_few_repeated_values_are_different_statements() -> None:
    events = [
        event(i, "INFO", f"Received disconnect from 10.1.1.{i}: 11: Bye Bye [preauth]") for i in range(5)
    ]
    events += [
        event(9 + i, "INFO", f"Received disconnect from 10.2.2.{i}: 11: disconnected by user")
        for i in range(2)
    ]
    assert sorted((p.template, p.count) for p in summarize(events)) == [
        ("Received disconnect from <*>: Bye Bye [preauth]", 5),
        ("Received disconnect from <*>: disconnected by user", 2),
    ]


def test_a_word_taking_many_values_is_a_variable() -> None:
    users = ["alice", "bob", "carol", "dave", "erin", "frank"]
    events = [event(i, "INFO", f"session opened for user {users[i % 6]} by (uid={i})") for i in range(30)]
    patterns = summarize(events)
    assert [(p.template, p.count) for p in patterns] == [("session opened for user <*> by (uid=<*>)", 30)]
    # With the split turned off, a few values are a variable too.
    few = [event(i, "INFO", f"VM {['Started', 'Stopped'][i % 2]} (Lifecycle Event)") for i in range(6)]
    assert len(summarize(few)) == 2
    assert len(summarize(few, MinerSettings(max_constant_values=0))) == 1


def test_the_ref_text_holds_every_field_on_one_line() -> None:
    pattern = Pattern(
        template="Connection is not available, request timed out after <*>",
        count=412,
        first=START,
        last=datetime(2026, 1, 2, 18, 31, 12, tzinfo=UTC) + timedelta(hours=-8),
        levels=("ERROR", "WARN"),
        example="Connection is not available,\n request timed out after 30000ms",
    )
    assert pattern_ref_text(pattern) == (
        'template="Connection is not available, request timed out after <*>" count=412 '
        "first=2026-01-02 09:58:01 last=2026-01-02 10:31:12 levels=ERROR,WARN "
        'example="Connection is not available, request timed out after 30000ms"'
    )


def test_events_without_time_or_level_still_summarize() -> None:
    events = [ParsedLine(timestamp=None, level=None, message=f"worker {i} idle") for i in range(3)]
    (pattern,) = summarize(events)
    assert (pattern.first, pattern.last, pattern.levels) == (None, None, ())
    assert pattern_ref_text(pattern) == (
        'template="worker <*> idle" count=3 first=- last=- levels=- example="worker 0 idle"'
    )


def test_no_events_no_patterns() -> None:
    assert summarize([]) == []


def test_a_value_spelled_in_one_or_several_words_stays_one_statement() -> None:
    events = [
        event(0, "INFO", "proxy 10.0.0.1:8080 close, 0 bytes sent, 0 bytes received, lifetime 00:01"),
        event(1, "INFO", "proxy 10.0.0.1:8080 close, 403 bytes sent, 426 bytes received, lifetime <1 sec"),
        event(2, "INFO", "proxy 10.0.0.2:8080 close, 12 bytes sent, 99 bytes received, lifetime 00:02"),
    ]
    (pattern,) = summarize(events)
    assert pattern.count == 3
    assert pattern.template.startswith("proxy <*> close, <*> sent, <*> received, lifetime ")


def test_a_leading_value_that_only_some_lines_carry_does_not_split_a_statement() -> None:
    events = [
        event(i, "WARN", f"www.example.com:{80 + i} error : connection request was canceled")
        for i in range(3)
    ]
    events += [event(9, "WARN", "error : connection request was canceled")]
    assert [p.count for p in summarize(events)] == [4]


def test_templates_made_only_of_values_are_not_merged_with_each_other() -> None:
    events = [event(0, None, "42"), event(1, None, "7"), event(2, None, "3|4|5|6"), event(3, None, "1|2|3|4")]
    assert sorted(p.count for p in summarize(events)) == [2, 2]


def test_chinese_messages_group_by_their_words_not_their_numbers() -> None:
    events = [event(i, "ERROR", f"订单{8800 + i}支付失败，耗时{30 + i}ms") for i in range(4)]
    events += [event(9, "INFO", "订单8841已发货")]
    assert [(p.template, p.count) for p in summarize(events)] == [
        ("订单<*>支付失败，耗时<*>", 4),
        ("订单<*>已发货", 1),
    ]


def test_empty_messages_are_one_empty_template() -> None:
    events = [event(0, "INFO", ""), event(1, "INFO", "   "), event(2, "INFO", "worker 3 idle")]
    assert sorted((p.template, p.count) for p in summarize(events)) == [("", 2), ("worker <*> idle", 1)]
