"""ClickHouse configured as the service would be: the `[logs.clickhouse]` table of the logs config
file, seen by `evigate sources` and the gRPC health entry, asked by the log tools of the running
service, alone or with a log tree."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.app import App, Components
from evigate.server.cli import main
from evigate.server.queries.types import LogsQuery, TimeWindow
from evigate.server.sources.files.backend import FixtureBackend
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs.config import LogConfig
from evigate.server.sources.logs.configfile import LogConfigError
from evigate.server.tool_sources import log_store
from evigate.server.tools import demo_data_dir
from tests.server.conftest import make_settings
from tests.sources.servers import free_port

from .conftest import Loaded

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def _config(tmp_path: Path, url: str, extra: str = "") -> Path:
    path = tmp_path / "evigate.toml"
    path.write_text(
        f'[logs]\n{extra}[logs.clickhouse]\nurl = "{url}"\ntable = "otel_logs"\n', encoding="utf-8"
    )
    return path


def test_evigate_sources_shows_clickhouse(
    clickhouse: Loaded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sources", "--logs-config", str(_config(tmp_path, clickhouse.server.url))]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith(f"clickhouse {clickhouse.server.url}: ready; version 18.16.1")
    assert f"table default.otel_logs: {clickhouse.demo_rows} rows" in line

    dead = f"http://127.0.0.1:{free_port()}"
    assert main(["sources", "--json", "--logs-config", str(_config(tmp_path, dead))]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert rows[1]["name"] == "clickhouse" and rows[1]["state"] == "unreachable"


def test_a_malformed_section_is_named_at_start(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[logs.clickhouse]\nurl = "http://ch:8123"\ntable = "a b"\n', encoding="utf-8")
    with pytest.raises(LogConfigError, match=r"logs\.clickhouse\.table: not an identifier"):
        log_store(make_settings(tmp_path, logs_config=path))


async def test_the_service_asks_clickhouse_and_reports_its_health(clickhouse: Loaded, tmp_path: Path) -> None:
    settings = make_settings(tmp_path, logs_config=_config(tmp_path, clickhouse.server.url))
    app = App(settings, Components())
    await app.start()
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            reply = await stub.Check(
                health_pb2.HealthCheckRequest(service="evigate.source.clickhouse"), timeout=5
            )
            assert reply.status == SERVING
        tools = app.tools
        assert isinstance(tools, FixtureBackend)
        page = await tools.query_logs(
            LogsQuery("order-service", "ERROR", "hikari", None, TimeWindow(None, None), 3)
        )
        assert page.extra["source"] == "clickhouse" and page.total > 0  # the demo files are not asked
        assert {s.name for s in (await tools.sightings()).services} >= {"order-service", "payment-service"}
    finally:
        await app.stop(grace=0)


async def test_files_named_beside_clickhouse_are_searched_with_it(clickhouse: Loaded, tmp_path: Path) -> None:
    root = demo_data_dir() / "logs"
    settings = make_settings(
        tmp_path, logs_config=_config(tmp_path, clickhouse.server.url, f'root = "{root}"\n')
    )
    app = App(settings, Components())
    await app.start()
    try:
        tools = app.tools
        assert isinstance(tools, FixtureBackend)
        question = LogsQuery("order-service", "ERROR", None, None, TimeWindow(None, None), 3)
        page = await tools.query_logs(question)
        assert set(page.extra["sources"]) == {"files", "clickhouse"}
        # the demo's lines are in both here: each source's count is added
        assert page.total == 2 * LogFiles(LogConfig(root=root)).query(question).total > 0
    finally:
        await app.stop(grace=0)
