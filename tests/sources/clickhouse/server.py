"""A real ClickHouse server (Debian's clickhouse-server) on free loopback ports with a temporary data
directory, and the tables the tests load: logs read by the file source, written as rows.

Every port and path of the packaged config.xml that a second instance would collide on is
overridden on the command line; readiness is awaited by polling /ping.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from evigate.server.sources.logs.events import LogEvent
from evigate.server.sources.logs.items import log_item
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.logs.search import search
from tests.sources.servers import Server, _start, free_port

CLICKHOUSE = "/usr/sbin/clickhouse-server"
CONFIG = "/etc/clickhouse-server/config.xml"

# The OpenTelemetry exporter's otel_logs, in the types 18.16 has: DateTime for DateTime64, and the
# two attribute maps as JSON text (Map came in 21.x).
OTEL_LOGS_18 = """
CREATE TABLE {table} (
    Timestamp DateTime, SeverityText String, SeverityNumber Int32, ServiceName String, Body String,
    TraceId String, SpanId String, ResourceAttributes String, LogAttributes String
) ENGINE = MergeTree() PARTITION BY toDate(Timestamp) ORDER BY (ServiceName, Timestamp)
"""


def start_clickhouse(workdir: Path) -> Server:
    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)
    http, tcp, interserver = free_port(), free_port(), free_port()
    args = [
        CLICKHOUSE,
        f"--config-file={CONFIG}",
        "--",
        f"--path={data}/",
        f"--tmp_path={data}/tmp/",
        f"--user_files_path={data}/user_files/",
        f"--format_schema_path={data}/format_schemas/",
        f"--http_port={http}",
        f"--tcp_port={tcp}",
        f"--interserver_http_port={interserver}",
        f"--logger.log={workdir}/clickhouse-server.log",
        f"--logger.errorlog={workdir}/clickhouse-server.err.log",
        "--listen_host=127.0.0.1",
        "--timezone=UTC",  # the loaded text times are UTC
    ]
    return _start("clickhouse", args, http, workdir, "/ping")


def execute(url: str, sql: str, body: bytes = b"") -> str:
    """A statement that writes (DDL, INSERT): the tests' own loading, not the source's read path."""
    response = httpx.post(url, params={"query": sql}, content=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.text


def otel_row(event: LogEvent) -> dict[str, Any]:
    """One event of the file source as an otel_logs row: trace id in its column, the item's other
    fields (the stack trace's chain and frames too) as log attributes."""
    item = log_item(event)
    fields = {k: v for k, v in item.items() if k not in ("timestamp", "level", "service", "message")}
    trace = str(fields.pop("trace_id", ""))
    return {
        "Timestamp": event.timestamp.strftime("%Y-%m-%d %H:%M:%S"),
        "SeverityText": event.level,
        "SeverityNumber": 0,
        "ServiceName": event.service,
        "Body": event.message,
        "TraceId": trace,
        "SpanId": "",
        "ResourceAttributes": "",
        "LogAttributes": json.dumps(fields, ensure_ascii=False) if fields else "",
    }


def file_events(root: Path) -> list[LogEvent]:
    return search(LogConfig(root=root), limit=10_000_000).events


def insert(url: str, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
    body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()
    # The server's time zone is the machine's: text times are read as UTC only when told so.
    execute(url, f"INSERT INTO {table} FORMAT JSONEachRow", body)


def load_world(url: str, table: str, logs: Path, services: Callable[[str], bool] = lambda _: True) -> int:
    """The world's log files, read by the file source, as rows of an otel_logs table (only the
    events of the services `services` keeps)."""
    execute(url, OTEL_LOGS_18.format(table=table))
    events = [event for event in file_events(logs) if services(event.service)]
    insert(url, table, (otel_row(event) for event in events))
    return len(events)
