"""Line-level reading: timestamps and zones, levels, JSON field aliases, logfmt, user patterns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from evigate.server.sources.logs import FieldNames, UserPattern
from evigate.server.sources.logs.events import normalize_level, parse_time
from evigate.server.sources.logs.jsonlines import JsonLines
from evigate.server.sources.logs.logfmt import Logfmt, parse_pairs
from evigate.server.sources.logs.textlines import LEADING_TIMESTAMP, RegexFormat

T = datetime(2026, 7, 8, 23, 5, 28, tzinfo=UTC)
SHANGHAI = timezone(timedelta(hours=8))


@pytest.mark.parametrize(
    ("value", "default_tz", "expected"),
    [
        ("2026-07-08T23:05:28Z", UTC, T),
        ("2026-07-09T07:05:28+08:00", UTC, T),
        ("2026-07-09T07:05:28+0800", UTC, T),
        ("2026-07-08T18:05:28-05:00", UTC, T),
        ("2026-07-08 23:05:28", UTC, T),  # no zone: the configured default
        ("2026-07-09 07:05:28", SHANGHAI, T),
        ("2026-07-09 07:05:28 +08:00", UTC, T),  # a space before the offset
        ("2026-07-08 23:05:28,250", UTC, T + timedelta(milliseconds=250)),  # Python logging's comma
        ("2026-07-08T23:05:28.123456789Z", UTC, T + timedelta(microseconds=123456)),  # CRI nanoseconds
        ("09/Jul/2026:07:05:28 +0800", UTC, T),  # nginx / Apache common log format
        (1783551928, UTC, T),  # epoch seconds
        (1783551928250, UTC, T + timedelta(milliseconds=250)),  # epoch milliseconds
        (1783551928.5, UTC, T + timedelta(milliseconds=500)),
        (1783551928000000000, UTC, T),  # epoch nanoseconds
        ("1783551928250", UTC, T + timedelta(milliseconds=250)),  # epoch millis as a logfmt string
    ],
)
def test_timestamps_become_aware_utc(value: object, default_tz: timezone, expected: datetime) -> None:
    moment = parse_time(value, default_tz)
    assert moment == expected
    assert moment is not None and moment.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", ["", "2026-07-08 23:0", "yesterday", None, True, "12:00:00 PM"])
def test_unreadable_timestamps_are_none(value: object) -> None:
    assert parse_time(value) is None


@pytest.mark.parametrize(
    ("raw", "level"),
    [
        ("WARNING", "WARN"), ("warn", "WARN"), ("CRITICAL", "FATAL"), ("crit", "FATAL"),
        ("SEVERE", "ERROR"), ("err", "ERROR"), ("Information", "INFO"), ("notice", "INFO"),
        ("[DEBUG]", "DEBUG"), ("trace", "TRACE"),
        (3, "ERROR"), (4, "WARN"), (50, "ERROR"), (30, "INFO"), ("no-such-level", None), (None, None),
        # an HTTP status (an access log's `status`): 5xx an error, 4xx a warning, the rest INFO
        (503, "ERROR"), ("504", "ERROR"), (404, "WARN"), ("429", "WARN"), (200, "INFO"), ("301", "INFO"),
        (600, None), ("5030", None),
    ],
)  # fmt: skip
def test_levels_are_normalised(raw: object, level: str | None) -> None:
    assert normalize_level(raw) == level


@pytest.mark.parametrize(
    "line",
    [
        '{"@timestamp":"2026-07-08T23:05:28Z","level":"ERROR","service":"pay","message":"boom"}',
        '{"time":"2026-07-08T23:05:28Z","severity":"error","app":"pay","msg":"boom"}',
        '{"ts":1783551928,"lvl":"ERR","service":{"name":"pay"},"log":"boom"}',
        '{"timestamp":"2026-07-09T07:05:28+08:00","log.level":"error","service.name":"pay","message":"boom"}',
        '{"time":"2026-07-08T23:05:28Z","level":"error","kubernetes":{"labels":{"app":"pay"}},"msg":"boom"}',
        '{"time":"2026-07-08T23:05:28Z","level":"error","kubernetes":{"labels":{"app.kubernetes.io/name":"pay"}},'
        '"msg":"boom"}',
    ],
)
def test_json_field_aliases_and_nested_paths(line: str) -> None:
    parsed = JsonLines(FieldNames(), UTC).parse(line)
    assert parsed is not None
    assert (parsed.timestamp, parsed.level, parsed.service, parsed.message) == (T, "ERROR", "pay", "boom")


@pytest.mark.parametrize(
    ("line", "level", "fields"),
    [
        # Datadog's `status` is the record's level
        ('{"timestamp":1783551928000,"status":"CRITICAL","service":"pay","message":"boom"}', "FATAL", {}),
        ('{"timestamp":1783551928000,"status":"warn","message":"boom"}', "WARN", {}),
        # a JSON access log's HTTP status gives the level and stays a field of the record
        ('{"time":"2026-07-08T23:05:28Z","status":503,"msg":"boom"}', "ERROR", {"status": "503"}),
        ('{"time":"2026-07-08T23:05:28Z","status":"404","msg":"boom"}', "WARN", {"status": "404"}),
        # a level key wins over the status; a status that names no level stays a field
        (
            '{"time":"2026-07-08T23:05:28Z","level":"info","status":"error","msg":"boom"}',
            "INFO",
            {"status": "error"},
        ),
        ('{"time":"2026-07-08T23:05:28Z","status":"completed","msg":"boom"}', None, {"status": "completed"}),
        # numeric levels of pino / bunyan, and the other spellings of the key
        ('{"time":"2026-07-08T23:05:28Z","level":60,"msg":"boom"}', "FATAL", {}),
        ('{"time":"2026-07-08T23:05:28Z","lvl":"eror","msg":"boom"}', "ERROR", {}),
        ('{"time":"2026-07-08T23:05:28Z","severity":"ALERT","msg":"boom"}', "FATAL", {}),
    ],
)
def test_json_levels_from_other_keys(line: str, level: str | None, fields: dict[str, str]) -> None:
    parsed = JsonLines(FieldNames(), UTC).parse(line)
    assert parsed is not None
    assert (parsed.level, parsed.message, dict(parsed.fields)) == (level, "boom", fields)


def test_a_logfmt_access_line_reads_its_status() -> None:
    parsed = Logfmt(FieldNames(), UTC).parse("ts=2026-07-08T23:05:28Z msg=request path=/pay status=502")
    assert parsed is not None
    assert (parsed.level, dict(parsed.fields)) == ("ERROR", {"path": "/pay", "status": "502"})


def test_json_field_names_are_configurable() -> None:
    names = FieldNames(time=("when",), level=("sev",), message=("text",), service=("svc",))
    parsed = JsonLines(names, UTC).parse(
        '{"when":"2026-07-08T23:05:28Z","sev":"W","svc":"a","text":"t","x":1}'
    )
    assert parsed is not None
    assert (parsed.timestamp, parsed.level, parsed.service, parsed.message) == (T, "WARN", "a", "t")
    assert parsed.fields == {"x": "1"}


@pytest.mark.parametrize("line", ["not json", '{"a":', "[1, 2]", '"just a string"'])
def test_json_rejects_what_is_not_an_object(line: str) -> None:
    assert JsonLines(FieldNames(), UTC).parse(line) is None


@pytest.mark.parametrize(
    ("line", "pairs"),
    [
        ('level=info msg="hello world" n=3', {"level": "info", "msg": "hello world", "n": "3"}),
        (r'msg="say \"hi\"" path=/a/b', {"msg": 'say "hi"', "path": "/a/b"}),
        ('msg="库存 不足" sku=SKU-1 debug', {"msg": "库存 不足", "sku": "SKU-1", "debug": "true"}),
        ("a= b=2", {"a": "", "b": "2"}),
        ("Started server on port 8080", None),  # prose, not pairs
        ("user=bob logged in", None),
        ('msg="unterminated level=info', None),
    ],
)
def test_logfmt_pairs(line: str, pairs: dict[str, str] | None) -> None:
    assert parse_pairs(line) == pairs


def test_logfmt_record() -> None:
    parsed = Logfmt(FieldNames(), UTC).parse(
        'ts=2026-07-08T23:05:28Z level=warning msg="slow query" took=2.5s'
    )
    assert parsed is not None
    assert (parsed.timestamp, parsed.level, parsed.message, dict(parsed.fields)) == (
        T, "WARN", "slow query", {"took": "2.5s"},
    )  # fmt: skip


def test_user_pattern_groups_and_time_format() -> None:
    nginx_error = UserPattern(
        "nginx-error",
        r"(?P<timestamp>\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) \[(?P<level>\w+)\] (?P<pid>\d+)#(?P<tid>\d+): "
        r"(?P<message>.*)",
        time_format="%Y/%m/%d %H:%M:%S",
    )
    fmt = RegexFormat(nginx_error, SHANGHAI)
    parsed = fmt.parse("2026/07/09 07:05:28 [error] 31#31: *7 connect() failed (111: Connection refused)")
    assert parsed is not None
    assert (parsed.timestamp, parsed.level, parsed.message) == (
        T,
        "ERROR",
        "*7 connect() failed (111: Connection refused)",
    )
    assert parsed.fields == {"pid": "31", "tid": "31"}
    assert fmt.name == "pattern:nginx-error"
    assert fmt.parse("2026/07/09 07:0") is None


@pytest.mark.parametrize(
    ("line", "level", "message"),
    [
        ("2026-07-08T23:05:28Z ERROR boom", "ERROR", "boom"),
        ("[2026-07-08 23:05:28,000] WARN [Log x] rolled (k.Log)", "WARN", "[Log x] rolled (k.Log)"),
        ("2026-07-08 23:05:28 just text", None, "just text"),
    ],
)  # fmt: skip
def test_leading_timestamp_fallback(line: str, level: str | None, message: str) -> None:
    parsed = RegexFormat(LEADING_TIMESTAMP, UTC).parse(line)
    assert parsed is not None
    assert (parsed.timestamp, parsed.level, parsed.message) == (T, level, message)
