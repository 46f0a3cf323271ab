"""The query: filters, order, totals, the index (reuse, invalidation, block skipping), keyword
search as bytes agreeing with parsing, and when a query fails rather than answering."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from evigate.server.queries.types import TimeWindow, ToolError
from evigate.server.sources.logs import LogConfig, LogEvent, LogReader, LogSearch, search
from evigate.server.sources.logs.events import at_or_above, normalize_level
from tests.sources.logs.readerkit import LOGBACK, SAMPLES, everything, reader

T0 = datetime(2026, 7, 8, 23, 0, tzinfo=UTC)


def window(start: str, end: str) -> TimeWindow:
    return TimeWindow(datetime.fromisoformat(start + "+00:00"), datetime.fromisoformat(end + "+00:00"))


def where(events: list[LogEvent]) -> list[str]:
    return [f"{e.file}:{e.line}" for e in events]


ORDER_ERRORS = ["order-service/app.log:16", "order-service/app.log:3"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"service": "order-service", "level": "ERROR"}, ORDER_ERRORS),
        ({"service": "ORDER-SERVICE", "keyword": "connection is NOT available"}, ORDER_ERRORS),  # any case
        ({"keyword": "SocketTimeoutException"}, ["order-service/app.log:3"]),  # found in a Caused by line
        ({"regex": r"orderId=O100[23]\b", "service": "order-service"}, ORDER_ERRORS),
        ({"level": "FATAL"}, ["worker/worker.log:18", "payment-service/payment-service.log:3"]),
        # a level keeps the more severe ones too (nginx's records: their 502 status is an error)
        ({"level": "warning", "window": window("2026-07-08T23:05:00", "2026-07-08T23:05:30")},
         ["order-service/app.log:3", "order-service/app.log:2", "inventory/inventory.log:3",
          "inventory/inventory.log:2", "nginx/access.log:4", "payment-service/payment-service.log:3",
          "nginx/access.log:2", "payment-service/payment-service.log:2",
          "payment-service/payment-service.log:1"]),
        ({"service": "payment-service", "window": window("2026-07-08T21:30:00", "2026-07-08T22:01:00")},
         ["payment-service/payment-service.log.1:3", "payment-service/payment-service.log.1:1"]),
        ({"keyword": "status=502"}, ["nginx/access.log:4", "nginx/access.log:2"]),  # the record as text
        ({"service": "no-such-service"}, []),
        ({"keyword": "no such text anywhere"}, []),
    ],
)  # fmt: skip
def test_filters(filters: dict[str, object], expected: list[str]) -> None:
    result = everything("plain", **filters)
    assert where(result.events) == expected
    assert result.total == len(expected)


STATIC_QUERIES = [
    {"service": "order-service", "level": "ERROR"},
    {"service": "order-service", "keyword": "connection is NOT available"},
    {"service": "payment-service"},
    {"service": "worker", "keyword": "no such text anywhere"},
    {"service": "no-such-service"},
    {"keyword": "SocketTimeoutException"},
    {"level": "FATAL"},
]


def test_a_static_tree_answers_as_a_walked_one() -> None:
    """Its files found once, and per service once those that may hold it: the same answers, each
    query asked twice (the second from what the first left)."""
    walked, static = reader("plain"), reader("plain", static=True)
    for filters in STATIC_QUERIES * 2:
        expected = walked.search(LogSearch(limit=1000, **filters))  # type: ignore[arg-type]
        found = static.search(LogSearch(limit=1000, **filters))  # type: ignore[arg-type]
        assert (where(found.events), found.total) == (where(expected.events), expected.total), filters


def test_a_static_tree_is_walked_once(tmp_path: Path) -> None:
    """A tree written once (a cluster dump's pod logs): a file added after the first query is not
    looked for; a tree that may change is walked again by every query."""
    root = tmp_path / "logs"
    shutil.copytree(SAMPLES / "plain", root)
    walked, static = reader(root), reader(root, static=True)
    for r in (walked, static):
        assert r.search(LogSearch(service="late")).total == 0
    (root / "late").mkdir()
    (root / "late" / "late.log").write_text("2026-07-08 23:00:00.000 ERROR [main] a.B - late to the party\n")
    assert walked.search(LogSearch(service="late")).total == 1
    assert static.search(LogSearch(service="late")).total == 0


def test_newest_first_limit_and_total() -> None:
    result = reader("plain").search(LogSearch(service="legacy", limit=3))
    assert result.total == 21
    assert [e.message for e in result.events] == [
        "legacy batch late by 12s", "legacy batch tick n=19", "legacy batch tick n=18",
    ]  # fmt: skip
    keyword = reader("plain").search(LogSearch(keyword="tick", limit=2))
    assert (keyword.total, [e.message for e in keyword.events]) == (
        20,
        ["legacy batch tick n=19", "legacy batch tick n=18"],
    )


def test_skipped_lines_are_those_of_the_files_the_query_reads() -> None:
    payment = everything("plain", service="payment-service")
    assert [str(s) for s in payment.skipped.first] == ["payment-service/payment-service.log.1:2 (binary)"]
    assert (
        everything(
            "plain", service="payment-service", window=window("2026-07-08T23:00:00", "2026-07-09T00:00:00")
        ).skipped.count
        == 0
    )
    assert everything("plain").skipped.count == 8
    assert len(everything("plain").skipped.first) == 5  # the first few locations only


def _write_json(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in records), encoding="utf-8")


def test_index_is_reused_and_rebuilt_when_a_file_changes(tmp_path: Path) -> None:
    log = tmp_path / "api.log"
    _write_json(log, [{"time": T0.isoformat(), "level": "info", "msg": "first"}])
    logs = LogReader(LogConfig(root=tmp_path))
    assert logs.search(LogSearch()).total == 1
    (before,) = logs.refresh().indexes
    assert logs.refresh().indexes[0] is before  # unchanged: the same index
    with log.open("a") as handle:
        handle.write(
            json.dumps({"time": (T0 + timedelta(seconds=1)).isoformat(), "level": "warn", "msg": "second"})
            + "\n"
        )
    os.utime(log, ns=(before.stamp[3] + 1_000_000, before.stamp[3] + 1_000_000))
    result = logs.search(LogSearch())
    assert [e.message for e in result.events] == ["second", "first"]
    assert logs.refresh().indexes[0] is not before
    log.unlink()
    with pytest.raises(ToolError, match="no log files"):
        logs.search(LogSearch())


def _mixed_tree(root: Path) -> None:
    """Three formats, many events, a stack trace every so often, escaped non-ASCII in JSON."""
    levels = ["DEBUG", "INFO", "INFO", "WARN", "ERROR"]
    records = []
    for i in range(600):
        moment = T0 + timedelta(seconds=7 * i)
        records.append({"@timestamp": moment.isoformat(), "level": levels[i % 5], "service": f"svc-{i % 3}",
                        "message": f"request {i} 库存 path=/api/v{i % 4} \"q\"", "n": i})  # fmt: skip
    _write_json(root / "shared" / "all.json", records)
    (root / "logfmt").mkdir()
    with gzip.open(root / "logfmt" / "kv.log.1.gz", "wt", encoding="utf-8") as out:
        for i in range(300):
            moment = T0 + timedelta(seconds=11 * i)
            out.write(
                f'time={moment.isoformat()} level={levels[i % 5].lower()} msg="job {i} done 库存" n={i}\n'
            )
    lines = []
    for i in range(300):
        moment = T0 + timedelta(seconds=13 * i)
        lines.append(f"{moment:%Y-%m-%d %H:%M:%S}.000 {levels[i % 5]:<5} [t-{i % 2}] c.s.App - step {i} 库存")
        if i % 10 == 0:
            lines += ["java.lang.IllegalStateException: step failed", "\tat c.s.App.run(App.java:1)"]
    (root / "text").mkdir()
    (root / "text" / "text.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


QUERIES = [
    LogSearch(limit=50),
    LogSearch(service="svc-1", level="ERROR", limit=500),
    LogSearch(keyword="request 42", limit=500),
    LogSearch(keyword="库存", limit=2000),  # \u-escaped in the JSON file: not searchable as bytes there
    LogSearch(keyword='"q"', limit=5),  # a quote: JSON escapes it
    LogSearch(keyword="IllegalStateException", limit=500),  # only in continuation lines
    LogSearch(keyword="STEP 1", level="info", limit=500),
    LogSearch(regex=r"job \d*7 done", limit=500),
    LogSearch(level="WARN", window=window("2026-07-08T23:10:00", "2026-07-08T23:20:00"), limit=500),
    LogSearch(
        service="kv", keyword="done", window=window("2026-07-08T23:30:00", "2026-07-08T23:40:00"), limit=500
    ),
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_blocks_and_byte_search_agree_with_reading_everything(tmp_path: Path, query: LogSearch) -> None:
    """Tiny blocks (many skipped) against one block per file, both against filtering every event."""
    _mixed_tree(tmp_path)
    small = LogReader(LogConfig(root=tmp_path, patterns=(LOGBACK,), block_events=7)).search(query)
    large = LogReader(LogConfig(root=tmp_path, patterns=(LOGBACK,), block_events=10**6)).search(query)
    every = LogReader(LogConfig(root=tmp_path, patterns=(LOGBACK,))).search(LogSearch(limit=10**6)).events
    expected = [e for e in every if _matches(e, query)]
    assert small.total == large.total == len(expected) > 0
    assert small.events == large.events == expected[: query.limit]


def _matches(event: LogEvent, query: LogSearch) -> bool:
    text = event.search_text()
    return (
        (query.service is None or event.service == query.service)
        and (query.level is None or event.level in at_or_above(normalize_level(query.level) or query.level))
        and (query.keyword is None or query.keyword.casefold() in text.casefold())
        and (query.regex is None or re.search(query.regex, text) is not None)
        and query.window.contains(event.timestamp)
    )


def test_nothing_readable_fails(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not a directory"):
        search(tmp_path / "missing")
    with pytest.raises(ToolError, match="no log files"):
        search(tmp_path)
    (tmp_path / "junk.log").write_bytes(b"\x00\x01\x02\x03\n\xff\xfe\n")
    with pytest.raises(ToolError, match=re.escape("2 lines skipped (first: junk.log:1 (binary), junk.log:2")):
        search(tmp_path)


def test_one_unreadable_service_fails_only_its_own_queries(tmp_path: Path) -> None:
    _write_json(tmp_path / "good.log", [{"time": T0.isoformat(), "level": "error", "msg": "fine"}])
    (tmp_path / "bad.log").write_bytes(b'{"time": "2026-07-08T23:0\n\x00\x00\x00\n')
    assert [e.message for e in search(tmp_path, service="good").events] == ["fine"]
    with pytest.raises(ToolError, match=r"bad\.log:1"):
        search(tmp_path, service="bad")
    everything_result = search(tmp_path)
    assert (everything_result.total, everything_result.skipped.count) == (1, 2)


def test_default_time_zone_and_level_are_configurable(tmp_path: Path) -> None:
    (tmp_path / "svc.log").write_text("2026-07-09 07:00:00 started\n")
    shanghai = LogConfig(root=tmp_path, default_tz=timezone(timedelta(hours=8)), default_level="WARN")
    (event,) = LogReader(shanghai).search(LogSearch()).events
    assert (event.timestamp, event.level) == (T0, "WARN")
    assert LogReader(shanghai).search(LogSearch(level="warning")).total == 1


def test_a_service_query_indexes_only_files_that_may_hold_the_service(tmp_path: Path) -> None:
    moment = T0.isoformat()
    _write_json(tmp_path / "cart.log", [{"time": moment, "level": "info", "msg": "from the path"}])
    shared: list[dict[str, object]] = [
        {"time": moment, "level": "info", "service": "CART", "msg": "from a field"},
        {"time": moment, "level": "info", "service": "other", "msg": "x"},
    ]
    _write_json(tmp_path / "shared.log", shared)
    with gzip.open(tmp_path / "unrelated.log.1.gz", "wt") as out:
        out.write(json.dumps({"time": moment, "level": "info", "msg": "nothing about it"}) + "\n")
    logs = LogReader(LogConfig(root=tmp_path))
    result = logs.search(LogSearch(service="cart"))
    assert sorted(e.message for e in result.events) == ["from a field", "from the path"]
    assert sorted(i.member.rel for i in logs.refresh("cart").indexes) == ["cart.log", "shared.log"]
    assert logs.search(LogSearch(service="nobody")).total == 0  # an unknown service: no evidence, no error
    assert logs.search(LogSearch()).total == 4
    assert len(logs.refresh("cart").indexes) == 3  # once indexed, a file is always consulted


def test_files_read_are_those_the_filters_could_not_exclude() -> None:
    late = window("2026-07-08T23:00:00", "2026-07-09T00:00:00")
    assert everything("plain", service="payment-service", window=late).files_read == [
        "payment-service/payment-service.log"
    ]
    assert everything("plain", level="FATAL").files_read == [
        "payment-service/payment-service.log",
        "worker/worker.log",
    ]
    counted = reader("plain").search(LogSearch(level="ERROR", limit=0))
    assert (counted.total, counted.events) == (everything("plain", level="ERROR").total, [])


def _severities_tree(root: Path) -> None:
    """Blocks of one level each (block_events=4): a FATAL-only block must be read for ERROR."""
    lines = []
    for n, level in enumerate(["INFO"] * 4 + ["WARN"] * 4 + ["ERROR"] * 4 + ["FATAL"] * 4 + ["INFO"] * 4):
        lines.append(f"{T0 + timedelta(seconds=n):%Y-%m-%d %H:%M:%S}.000 {level} [main] db.Pool - line {n}")
    (root / "db").mkdir()
    (root / "db" / "db.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    records: list[dict[str, object]] = [
        {"time": (T0 + timedelta(seconds=n)).isoformat(), "level": level, "msg": f"record {n}"}
        for n, level in enumerate(["info", "warn", "error", "critical", "panic", "emerg"])
    ]
    _write_json(root / "api" / "api.log", records)


@pytest.mark.parametrize(
    ("level", "levels"),
    [("ERROR", {"ERROR", "FATAL"}), ("error", {"ERROR", "FATAL"}), ("WARNING", {"WARN", "ERROR", "FATAL"}),
     ("FATAL", {"FATAL"}), ("INFO", {"INFO", "WARN", "ERROR", "FATAL"})],
)  # fmt: skip
@pytest.mark.parametrize("keyword", [None, "line", "record"])
def test_a_level_is_that_level_and_above(
    tmp_path: Path, level: str, levels: set[str], keyword: str | None
) -> None:
    """A question about errors finds the FATAL / CRITICAL / PANIC / EMERG lines too: through the
    index (blocks whose levels lie below are skipped, the others kept), through a keyword's byte
    search, and through the scan of a file not indexed yet."""
    _severities_tree(tmp_path)
    config = LogConfig(root=tmp_path, patterns=(LOGBACK,), block_events=4)
    scanned = LogReader(replace(config, scan_from_bytes=0)).search(
        LogSearch(level=level, keyword=keyword, limit=100)
    )
    reader_ = LogReader(config)
    indexed = reader_.search(LogSearch(level=level, keyword=keyword, limit=100))
    for result in (scanned, indexed):
        assert {e.level for e in result.events} == levels
        wanted = [e for e in everything(tmp_path, keyword=keyword).events if e.level in levels]
        assert where(result.events) == where(wanted) and result.total == len(wanted)
    db = next(i for i in reader_.refresh().indexes if i.member.rel == "db/db.log")
    assert len(db.blocks) == 5
