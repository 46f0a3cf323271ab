"""What a ClickHouse log source says when it cannot answer, and a user's table of other names."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from evigate.server.queries.types import LogsQuery, PatternsQuery, TimeWindow, ToolError
from evigate.server.sources.clickhouse.clickhouse_config import (
    ClickHouseConfig,
    ClickHouseConfigError,
    clickhouse_config,
)
from evigate.server.sources.clickhouse.source import ClickHouseLogs
from evigate.server.sources.http import SourceError
from evigate.server.tools import demo_data_dir

from .conftest import CUSTOM_COLUMNS, Loaded, source
from .server import start_clickhouse

ALL = TimeWindow(None, None)


async def test_a_pattern_the_server_rejects_fails_with_its_message(demo_logs: ClickHouseLogs) -> None:
    # Python accepts a possessive quantifier; RE2 does not: the call fails, it never finds nothing.
    with pytest.raises(SourceError) as failed:
        await demo_logs.query(LogsQuery(None, None, None, r"timed out after \d++ms", ALL, 5))
    assert failed.value.kind == "bad_query"
    assert "clickhouse at http://127.0.0.1" in str(failed.value)
    assert "DB::Exception" in failed.value.detail and "e.what()" not in failed.value.detail


async def test_a_missing_table_or_column_is_named(clickhouse: Loaded) -> None:
    logs = source(clickhouse.server, table="no_such_table")
    try:
        with pytest.raises(ToolError, match="no_such_table doesn't exist"):
            await logs.summarize(PatternsQuery(None, None, ALL, 5))
        health = await logs.health()
        assert health.reachable and not health.ready and "no_such_table" in (health.detail or "")
    finally:
        await logs.aclose()


async def test_input_is_never_sql(demo_logs: ClickHouseLogs) -> None:
    hostile = "') OR 1=1 --"
    page = await demo_logs.query(LogsQuery(None, None, hostile, None, ALL, 5))
    assert (page.items, page.total) == ([], 0)
    with pytest.raises(ToolError, match=re.escape(f"no logs of {hostile} are available")):
        await demo_logs.query(LogsQuery(hostile, None, None, None, ALL, 5))  # a name, read as one


async def test_a_value_shaped_like_the_multipart_body_stays_a_value(demo_logs: ClickHouseLogs) -> None:
    """The SQL and the parameter table travel as one multipart body: a keyword that forges a part
    boundary and a `query` field is still only a value, and the URL carries settings, no SQL."""
    forged = '"}\r\n--x\r\nContent-Disposition: form-data; name="query"\r\n\r\nSELECT 1\r\n--x--\r\n'
    page = await demo_logs.query(LogsQuery(None, None, forged, None, ALL, 5))
    assert (page.items, page.total) == ([], 0)
    request = demo_logs.client._request("SELECT 1 FROM t WHERE x = (SELECT k FROM p)", {"k": forged})
    assert "SELECT" not in str(request.url) and b"SELECT k FROM p" in request.content
    plain = await demo_logs.query(LogsQuery(None, None, "HikariPool", None, ALL, 5))
    assert plain.total > 0


async def test_a_user_schema_with_other_column_names(clickhouse: Loaded, demo_logs: ClickHouseLogs) -> None:
    custom = source(clickhouse.server, table="app_events", columns=CUSTOM_COLUMNS)
    try:
        question = LogsQuery("order-service", "ERROR", "hikari", None, ALL, 20)
        mine, otel = await custom.query(question), await demo_logs.query(question)
        assert mine.total == otel.total > 0
        assert [i["message"] for i in mine.items] == [i["message"] for i in otel.items]
        assert {i["level"] for i in mine.items} == {"ERROR"}  # written in lower case in `lvl`
        assert "trace_id" in mine.items[0] and "thread" in mine.items[0]  # from the `extra` JSON
        summary = await custom.summarize(PatternsQuery("order-service", "WARN", ALL, 3))
        assert (
            summary.items == (await demo_logs.summarize(PatternsQuery("order-service", "WARN", ALL, 3))).items
        )
    finally:
        await custom.aclose()


def test_the_mapping_comes_from_configuration() -> None:
    config = clickhouse_config(
        {
            "url": "http://ch:8123",
            "table": "app_events",
            "columns": {"timestamp": "event_time", "trace_id": ""},
        }
    )
    assert (config.table_ref, config.columns.timestamp, config.columns.body) == (
        "`default`.`app_events`",
        "event_time",
        "Body",
    )
    assert "trace_id" not in config.columns.extras()
    bad: dict[str, Any]
    for bad in (
        {"table": "logs; DROP TABLE x"},
        {"columns": {"body": "Body`"}},
        {"colums": {}},
        {"columns": {"x": "y"}},
    ):
        with pytest.raises(ClickHouseConfigError):
            clickhouse_config(bad)


async def test_a_server_stopped_in_mid_session(tmp_path: object) -> None:
    from pathlib import Path

    from .server import load_world

    server = start_clickhouse(Path(str(tmp_path)))
    logs = ClickHouseLogs(ClickHouseConfig(url=server.url))
    try:
        load_world(server.url, "otel_logs", demo_data_dir() / "logs")
        asked = LogsQuery("order-service", "ERROR", None, None, ALL, 3)
        assert (await logs.query(asked)).total > 0
        server.stop()
        with pytest.raises(SourceError) as failed:
            await logs.query(asked)
        assert failed.value.kind == "unreachable"
        assert "clickhouse at " in str(failed.value) and "unreachable" in str(failed.value)
        health = await logs.health()
        assert not health.reachable and "UNREACHABLE" in health.line()
    finally:
        server.stop()
        await logs.aclose()


async def test_a_query_longer_than_the_timeout_fails_as_a_timeout(clickhouse: Loaded) -> None:
    logs = source(clickhouse.server, timeout_s=0.5)
    try:
        with pytest.raises(SourceError) as failed:
            # One row per block, a second per row: past the half-second bound of client and server.
            slow = "SELECT sleepEachRow(1) FROM system.numbers LIMIT 4 SETTINGS max_block_size = 1"
            await logs.client.rows(slow)
        assert failed.value.kind in ("timeout", "bad_query")
        assert "timed out" in str(failed.value) or "Timeout exceeded" in str(failed.value)
    finally:
        await logs.aclose()


def test_window_is_whole_seconds() -> None:
    from evigate.server.sources.clickhouse.sql import Where

    where = Where(CUSTOM_COLUMNS)
    where.window(datetime(2026, 7, 8, 23, 0, tzinfo=UTC), datetime(2026, 7, 8, 23, 20, 0, 500000, tzinfo=UTC))
    assert where.params == {"since": 1783551600, "until": 1783552801}
    assert "`event_time` >= toDateTime((SELECT since FROM p))" in where.sql()


@pytest.mark.parametrize(
    ("pattern", "server_side"),
    [
        (r"(?<![0-9])502(?![0-9])", "502"),
        (r"foo(?=(bar|baz))x", "foox"),
        (r"(a)\1b", "(a).*b"),
        (r"(?P<x>ab)(?P=x)", "(?P<x>ab).*"),
        (r"[(?=]502", "[(?=]502"),  # inside a class, `(?=` is three characters
    ],
)
def test_what_re2_cannot_run_is_relaxed(pattern: str, server_side: str) -> None:
    from evigate.server.sources.clickhouse.relaxed import relaxed

    assert relaxed(pattern) == server_side
