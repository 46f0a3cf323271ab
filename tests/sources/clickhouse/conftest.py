"""One ClickHouse server for the session, holding the demo world's and kestrel's logs as otel_logs
tables (loaded from what the file source reads) and the same demo logs in a schema of other names."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evigate.server.sources.clickhouse.clickhouse_config import ClickHouseConfig, Columns
from evigate.server.sources.clickhouse.source import ClickHouseLogs
from evigate.server.tools import demo_data_dir
from tests.sources.servers import Server

from .server import execute, file_events, insert, load_world, start_clickhouse

KESTREL_LOGS = Path(__file__).resolve().parents[2] / "worlds" / "kestrel" / "logs"

# A user's own table: other names, a plain level column, no severity number, no trace ids.
CUSTOM_TABLE = """
CREATE TABLE app_events (
    event_time DateTime, lvl String, app String, msg String, extra String
) ENGINE = MergeTree() ORDER BY (app, event_time)
"""
CUSTOM_COLUMNS = Columns(
    timestamp="event_time", severity_text="lvl", severity_number="", service="app", body="msg",
    trace_id="", span_id="", resource_attributes="", log_attributes="extra",
)  # fmt: skip


@dataclass(frozen=True)
class Loaded:
    server: Server
    demo_rows: int
    kestrel_rows: int


@pytest.fixture(scope="session")
def clickhouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    server = start_clickhouse(tmp_path_factory.mktemp("clickhouse"))
    try:
        demo = load_world(server.url, "otel_logs", demo_data_dir() / "logs")
        kestrel = load_world(server.url, "kestrel_logs", KESTREL_LOGS)
        execute(server.url, CUSTOM_TABLE)
        insert(server.url, "app_events", _custom_rows(demo_data_dir() / "logs"))
        yield Loaded(server, demo, kestrel)
    finally:
        server.stop()


def _custom_rows(root: Path) -> Iterator[dict[str, str]]:
    import json

    for event in file_events(root):
        fields = dict(event.fields)
        yield {
            "event_time": event.timestamp.strftime("%Y-%m-%d %H:%M:%S"),
            "lvl": event.level.lower(),
            "app": event.service,
            "msg": event.message,
            "extra": json.dumps(fields, ensure_ascii=False),
        }


def source(server: Server, **settings: object) -> ClickHouseLogs:
    return ClickHouseLogs(ClickHouseConfig(url=server.url, **settings))  # type: ignore[arg-type]


@pytest.fixture
async def demo_logs(clickhouse: Loaded) -> AsyncIterator[ClickHouseLogs]:
    logs = source(clickhouse.server)
    yield logs
    await logs.aclose()
