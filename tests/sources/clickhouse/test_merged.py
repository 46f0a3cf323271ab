"""Files for some services and ClickHouse for the rest, searched as one: the same answers as all
the files, and a fault in either source fails the call."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from evigate.server.queries.types import LogsQuery, Page, PatternsQuery, TimeWindow
from evigate.server.sources.clickhouse.clickhouse_config import ClickHouseConfig
from evigate.server.sources.clickhouse.source import ClickHouseLogs
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.http import SourceError
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.merged_logs import MergedLogs
from evigate.server.tools import demo_data_dir

from .conftest import Loaded, source
from .server import load_world
from .test_same_answers import DEMO_INCIDENT, _line, _pattern

ALL = TimeWindow(None, None)
ON_FILES = ("order-service", "gateway")  # the rest (payment, inventory, user) sit in ClickHouse


class FileLogs:
    name = "files"

    def __init__(self, root: Path) -> None:
        self.files = LogFiles(LogConfig(root=root))

    async def query_logs(self, q: LogsQuery) -> Page:
        return await asyncio.to_thread(self.files.query, q)

    async def summarize_logs(self, q: PatternsQuery) -> Page:
        return await asyncio.to_thread(self.files.summarize, q)


@pytest.fixture(scope="module")
def split(clickhouse: Loaded, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("files-part")
    for service in ON_FILES:
        shutil.copy(demo_data_dir() / "logs" / f"{service}.ndjson", root)
    load_world(clickhouse.server.url, "rest_logs", demo_data_dir() / "logs", lambda s: s not in ON_FILES)
    return root


@pytest.mark.parametrize(
    "question",
    [
        LogsQuery(None, "ERROR", None, None, ALL, 10_000),
        LogsQuery(None, None, "timed out", None, DEMO_INCIDENT, 10_000),
        LogsQuery("payment-service", None, None, None, ALL, 10_000),
        LogsQuery("order-service", "ERROR", "hikari", None, ALL, 10_000),
    ],
    ids=lambda q: f"{q.service}-{q.level}-{q.keyword}",
)
async def test_two_sources_answer_as_all_the_files(
    clickhouse: Loaded, split: Path, question: LogsQuery
) -> None:
    rest = source(clickhouse.server, table="rest_logs")
    try:
        merged = MergedLogs([FileLogs(split), rest])
        got = await merged.query_logs(question)
        expected = LogFiles(LogConfig(root=demo_data_dir() / "logs")).query(question)
        assert got.total == expected.total > 0
        assert sorted(map(_line, got.items)) == sorted(map(_line, expected.items))
        # each source's own facts: the files' parsers, ClickHouse's pushdown (or why one was left out)
        left_out = got.extra.get("left_out", {})
        assert "parsers" in got.extra or "files" in left_out
        assert got.extra.get("source") == "clickhouse" or "clickhouse" in left_out
        if question.service == "payment-service":  # held by ClickHouse alone: the files say so
            assert "no logs of payment-service" in got.extra["left_out"]["files"]
    finally:
        await rest.aclose()


async def test_two_sources_summarize_as_all_the_files(clickhouse: Loaded, split: Path) -> None:
    rest = source(clickhouse.server, table="rest_logs")
    try:
        question = PatternsQuery(None, "WARN", ALL, 10)
        got = await MergedLogs([FileLogs(split), rest]).summarize_logs(question)
        expected = LogFiles(LogConfig(root=demo_data_dir() / "logs")).summarize(question)
        assert [_pattern(p) for p in got.items] == [_pattern(p) for p in expected.items]
        assert got.extra["events"] == expected.extra["events"]
    finally:
        await rest.aclose()


async def test_one_source_down_fails_the_call(split: Path) -> None:
    down = ClickHouseLogs(ClickHouseConfig(url="http://127.0.0.1:9"))
    try:
        with pytest.raises(SourceError, match=re.escape("clickhouse at http://127.0.0.1:9 is unreachable")):
            await MergedLogs([FileLogs(split), down]).query_logs(
                LogsQuery("order-service", None, None, None, ALL, 5)
            )
    finally:
        await down.aclose()
