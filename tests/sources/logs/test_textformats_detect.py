"""Format detection only where it is unambiguous, and formats built from a user's own regex."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from evigate.server.sources.logs.textformats import detect_text_format, shipped_format, user_format

LOGBACK_WITH_TRACE = [
    "2026-03-04 14:03:22.917 [main] ERROR com.example.shop.CheckoutService - checkout failed for cart 8841",
    "java.lang.IllegalStateException: payment gateway unavailable",
    "\tat com.example.shop.PaymentClient.charge(PaymentClient.java:88)",
    "\tat com.example.shop.CheckoutService.checkout(CheckoutService.java:41)",
    "Caused by: java.net.SocketTimeoutException: Read timed out",
    "\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)",
    "\t... 12 more",
    "2026-03-04 14:03:23.005 [main] INFO  com.example.shop.CheckoutService - retry scheduled for cart 8841",
]


def test_stack_trace_lines_do_not_count_against_the_header_format() -> None:
    found = detect_text_format(LOGBACK_WITH_TRACE)
    assert found is not None and found.name == "logback_dated"


def test_free_text_without_any_header_is_no_format() -> None:
    sample = ["starting up", "listening on 0.0.0.0:8080", "ready", "got SIGTERM, draining connections"]
    assert detect_text_format(sample) is None


def test_a_file_mixing_two_formats_half_and_half_is_ambiguous() -> None:
    sample = [
        "2026/03/04 14:03:22 [error] 1187#1187: *4521 connect() failed (111: Connection refused)",
        "Mar  4 14:03:22 web-03 sshd[20411]: Accepted publickey for deploy from 198.51.100.23 port 52214",
        "2026/03/04 14:03:23 [error] 1187#1187: *4522 connect() failed (111: Connection refused)",
        "Mar  4 14:03:23 web-03 sshd[20412]: Accepted publickey for deploy from 198.51.100.24 port 52215",
    ]
    assert detect_text_format(sample) is None


def test_a_majority_format_wins_over_a_few_odd_lines() -> None:
    sample = [f"2026/03/04 14:03:{s:02d} [warn] 77#77: *{s} client closed connection" for s in range(8)]
    sample += ["garbage \x00\x01 line", "another one"]
    found = detect_text_format(sample)
    assert found is not None and found.name == "nginx_error"


def test_two_equally_specific_formats_parsing_the_same_lines_are_ambiguous() -> None:
    first = user_format(
        "a", r"(?P<timestamp>\S+ \S+) (?P<level>\w+) (?P<message>.*)", timestamp_format="iso8601"
    )
    second = user_format(
        "b", r"(?P<timestamp>\S+ \S+) (?P<service>\w+) (?P<message>.*)", timestamp_format="iso8601"
    )
    sample = ["2026-03-04 14:03:22 ERROR boom", "2026-03-04 14:03:23 INFO fine"]
    assert detect_text_format(sample, [first, second]) is None
    # Given alone, either one is the answer.
    assert detect_text_format(sample, [first]) is first


def test_the_more_specific_of_two_matching_formats_wins() -> None:
    loose = user_format("loose", r"(?P<timestamp>{TS}) (?P<message>.*)", timestamp_format="iso8601")
    sample = ["2026-03-04 14:03:22,917 - payments.worker - ERROR - charge 5521 declined"] * 3
    found = detect_text_format(sample, [loose, shipped_format("python_asctime")])
    assert found is not None and found.name == "python_asctime"


@pytest.mark.parametrize(
    ("prefixed", "source"),
    [
        ("[pod/checkout-7d9f/app] ", "pod/checkout-7d9f/app"),  # kubectl logs --prefix
        ("checkout-1  | ", "checkout-1"),  # docker compose logs
        ("app.log.1 ", "app.log.1"),  # aggregated files
    ],
)
def test_lines_behind_a_source_label_are_read(prefixed: str, source: str) -> None:
    lines = [
        f"{prefixed}2026-03-04 14:03:22,917 WARN [main] com.acme.Cart: cart 12 expired",
        f"{prefixed}2026-03-04 14:03:23,010 INFO [main] com.acme.Cart: cart 13 saved",
    ]
    found = detect_text_format(lines)
    assert found is not None and found.name == "log4j_thread+prefix"
    parsed = found.parse(lines[0])
    assert parsed is not None
    assert (parsed.message, parsed.level, parsed.fields["source"]) == ("cart 12 expired", "WARN", source)


def test_a_user_pattern_with_a_strptime_format_and_a_zone() -> None:
    shanghai = timezone(timedelta(hours=8))
    fmt = user_format(
        "billing",
        r"(?P<timestamp>\d\d\.\d\d\.\d{4} \d\d:\d\d:\d\d) \| (?P<level>\w+) \| (?P<service>[\w-]+) \| "
        r"(?P<order>\d+) \| (?P<message>.*)",
        timestamp_format="%d.%m.%Y %H:%M:%S",
        tz=shanghai,
    )
    parsed = fmt.parse("04.03.2026 22:03:22 | warning | billing-api | 8841 | 余额不足, retrying")
    assert parsed is not None
    assert parsed.timestamp == datetime(2026, 3, 4, 14, 3, 22, tzinfo=UTC)
    assert (parsed.level, parsed.service, parsed.message) == ("WARN", "billing-api", "余额不足, retrying")
    assert parsed.fields == {"order": "8841"}
    assert fmt.name == "billing"
    # A line whose timestamp group matches but names no date is not this format.
    assert fmt.parse("31.02.2026 22:03:22 | warning | billing-api | 8841 | x") is None


def test_a_user_pattern_may_use_the_shipped_placeholders_and_any_timestamp_kind() -> None:
    fmt = user_format("edge", r"(?P<timestamp>\S+ \S+) edge (?P<level>{LEVEL}) (?P<message>.*)")
    iso = fmt.parse("2026-03-04 14:03:22Z edge error upstream reset")
    slashed = fmt.parse("2026/03/04 14:03:22 edge Warning upstream slow")
    assert iso is not None and iso.timestamp == datetime(2026, 3, 4, 14, 3, 22, tzinfo=UTC)
    assert iso.level == "ERROR"
    assert slashed is not None and slashed.level == "WARN"
    assert slashed.timestamp == datetime(2026, 3, 4, 14, 3, 22, tzinfo=UTC)


def test_a_user_pattern_that_is_not_a_regex_or_lacks_a_message_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid regex"):
        user_format("broken", r"(?P<message>.*")
    with pytest.raises(ValueError, match="'message' or a 'timestamp' group"):
        user_format("empty", r"(?P<level>\w+)")
