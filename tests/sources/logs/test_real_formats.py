"""Levels, times and messages of real default formats (the fixtures under formats/ are written
from each program's documented default layout): nothing read as INFO that says otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evigate.server.sources.logs.events import message_level
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.logs.search import LogReader, LogSearch

FORMATS = Path(__file__).parent / "formats"


def _read(tmp_path: Path, name: str) -> tuple[list[tuple[str, str]], dict[str, str]]:
    shutil.copy(FORMATS / name, tmp_path / name)
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(limit=100))
    return [(e.level, e.message) for e in reversed(result.events)], result.parsers


@pytest.mark.parametrize(
    ("name", "parser", "levels"),
    [
        ("postgresql.log", "postgresql", ["INFO", "ERROR", "INFO", "INFO", "FATAL", "WARN", "FATAL"]),
        ("celery.log", "celery", ["INFO", "INFO", "WARN", "ERROR", "FATAL"]),
        ("gunicorn.log", "python_bracketed", ["INFO", "INFO", "INFO", "FATAL", "ERROR"]),
        ("uwsgi.log", "uwsgi_request", ["INFO", "ERROR", "INFO"]),
        ("golog.log", "go_log", ["INFO", "ERROR", "WARN", "FATAL"]),
        ("rails.log", "rails", ["INFO", "WARN", "ERROR", "FATAL"]),
        ("pino.log", "json", ["INFO", "WARN", "ERROR", "FATAL"]),
        ("bunyan.log", "json", ["INFO", "ERROR", "WARN"]),
        ("redis.log", "redis", ["WARN", "INFO", "DEBUG", "INFO", "WARN", "WARN"]),
        # no level word at all: an access line's status class is its level
        ("nginx_combined.log", "nginx_access", ["INFO", "WARN", "ERROR", "INFO", "ERROR"]),
        ("envoy.log", "envoy_access", ["INFO", "ERROR", "WARN"]),
        ("gohttp.log", "go_log", ["INFO", "ERROR", "WARN", "ERROR", "ERROR"]),
    ],
)
def test_each_default_format_keeps_its_levels(
    tmp_path: Path, name: str, parser: str, levels: list[str]
) -> None:
    events, parsers = _read(tmp_path, name)
    assert parsers == {name: parser}
    assert [level for level, _ in events] == levels


def test_the_message_keeps_the_severity_word_that_gave_the_level(tmp_path: Path) -> None:
    events, _ = _read(tmp_path, "golog.log")
    assert events[1] == ("ERROR", "error: dial tcp 10.0.0.5:5432: connect: connection refused")
    events, _ = _read(tmp_path, "mixed.log")
    assert ("ERROR", "Error: disk quota exceeded") in events
    assert ("INFO", "some tool wrote this line without a level") in events


def test_postgresql_reads_past_its_prefix(tmp_path: Path) -> None:
    events, _ = _read(tmp_path, "postgresql.log")
    assert events[1] == ("ERROR", 'duplicate key value violates unique constraint "orders_pkey"')


def test_python_default_format_in_a_container_keeps_its_levels(tmp_path: Path) -> None:
    pod = tmp_path / "pods" / "jobs_reconciler-7d9f8b6c5d-x2kqz_0b1c2d3e-1111-2222-3333-444455556666" / "app"
    pod.mkdir(parents=True)
    lines = (FORMATS / "python_default.log").read_text().splitlines()
    (pod / "0.log").write_text(
        "".join(f"2026-07-08T23:05:{28 + i:02d}.000000000Z stderr F {line}\n" for i, line in enumerate(lines))
    )
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(limit=10))
    assert [e.level for e in reversed(result.events)] == ["INFO", "WARN", "ERROR", "FATAL"]
    assert {e.service for e in result.events} == {"reconciler"}


@pytest.mark.parametrize(
    ("message", "level"),
    [("error: x", "ERROR"), ("Error handling request", "ERROR"), ("[WARNING] low disk", "WARN"),
     ("panic: nil map", "FATAL"), ("no error found", None), ("errors=0", None)],
)  # fmt: skip
def test_only_a_leading_severity_word_gives_a_level(message: str, level: str | None) -> None:
    assert message_level(message) == level


@pytest.mark.parametrize(
    ("message", "level"),
    [("http: proxy error: context deadline exceeded", "ERROR"),
     ("main.go:42: error: open /etc/app.yaml: no such file", "ERROR"),
     ("db: pool warning: 9 of 10 connections busy", "WARN"),
     ("worker: panic: send on closed channel", "FATAL"),
     ("config: loaded 12 routes", None),
     ("http: TLS handshake error from 10.0.0.7:5120: EOF", None),
     ("retrying after an error: timeout", None)],
)  # fmt: skip
def test_a_severity_word_after_the_components_prefix_gives_a_level(message: str, level: str | None) -> None:
    # Go's log package and net/http write "<component>: <what> error: <cause>" with no level.
    assert message_level(message) == level


@pytest.mark.parametrize(
    ("message", "level"),
    [("POST /v1/bookings 503 2328ms upstream=order-router:8080", "ERROR"),
     ('"GET /missing HTTP/1.1" 404 153', "WARN"),
     ("GET /health 200 1ms", "INFO"),
     # a proxy reporting the status a request got
     ("upstream fare-search:8000 returned 504 for GET /v1/fares after 10.00s", "ERROR"),
     ("retrying POST /v1/charge: status=429", "WARN"),
     ("query returned 504 rows", None),
     ("GET /v1/fares took 503ms", None),
     ("GET the 500 newest rows", None)],
)  # fmt: skip
def test_a_request_line_gives_its_status_class_as_the_level(message: str, level: str | None) -> None:
    # Request logs of Go, Node and proxies write "METHOD path [protocol] status ..." with no level,
    # and a proxy the status an upstream answered a request with.
    assert message_level(message) == level


def test_redis_keeps_its_roles_and_times(tmp_path: Path) -> None:
    shutil.copy(FORMATS / "redis.log", tmp_path / "redis.log")
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(level="WARN", limit=10))
    assert [e.message for e in reversed(result.events)] == [
        "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
        "Can't save in background: fork: Cannot allocate memory",
        "Connection with master lost.",
    ]
    assert result.events[1].timestamp.isoformat() == "2026-03-03T09:30:00.002000+00:00"


def test_json_records_between_text_lines_are_read_not_skipped(tmp_path: Path) -> None:
    events, parsers = _read(tmp_path, "mixed.log")
    assert ("WARN", "json in the middle") in events
    assert len(events) == 5 and parsers == {"mixed.log": "pattern:leading-timestamp"}


def test_a_container_stream_of_two_writers_keeps_both_and_its_odd_lines(tmp_path: Path) -> None:
    pod = tmp_path / "pods" / "shop_web-7d9f8b6c5d-x2kqz_0b1c2d3e-1111-2222-3333-444455556666" / "web"
    pod.mkdir(parents=True)
    access = '10.0.0.{n} - - [08/Jul/2026:23:05:{s:02d} +0000] "GET /cart HTTP/1.1" 200 512 "-" "curl/8.5"'
    lines = [access.format(n=i, s=i) for i in range(6)]
    lines.insert(3, "[2026-07-08 23:05:03 +0000] [7] [ERROR] Error handling request /api/checkout")
    lines.insert(4, "Traceback (most recent call last):")
    lines.insert(5, '  File "/app/views.py", line 12, in checkout')
    lines.insert(6, "requests.exceptions.ReadTimeout: read timed out")
    lines.append("*** uWSGI listen queue of socket :8000 full !!! (101/100) ***")
    (pod / "0.log").write_text(
        "".join(f"2026-07-08T23:05:{i:02d}.000000000Z stderr F {line}\n" for i, line in enumerate(lines))
    )
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(limit=20))
    assert result.skipped.count == 0
    error = next(e for e in result.events if e.level == "ERROR")
    assert error.message == "Error handling request /api/checkout"
    assert error.chain_text() == "requests.exceptions.ReadTimeout: read timed out"
    odd = result.events[0]
    assert odd.message.startswith("*** uWSGI listen queue") and odd.level == "INFO"


def test_prose_with_a_status_pair_is_not_taken_for_logfmt(tmp_path: Path) -> None:
    """A status is a level only in a record: a text line whose message holds `status=200` and
    another pair stays a line of its text format (here Spring Boot's), not a logfmt record."""
    lines = [
        f"2026-07-08 23:05:{s:02d}.000  INFO 1 --- [exec-{s}] c.s.App : Request handled method=GET status=200"
        for s in range(6)
    ]
    (tmp_path / "shop.log").write_text("\n".join(lines) + "\n")
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(limit=10))
    assert result.total == 6 and result.skipped.count == 0
    assert result.parsers["shop.log"] != "logfmt"
