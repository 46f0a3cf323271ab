"""ClickHouse configured as the service would be: the `clickhouse:` section of the sources file,
seen by `evigate sources` and the gRPC health entry, asked by the running service's log tools with
the files (each holding some services) searched as one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.app import App, Components
from evigate.server.cli import main
from evigate.server.live_sources import build_sources
from evigate.server.queries.types import LogsQuery, TimeWindow
from evigate.server.settings import ConfigError
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.tools import demo_data_dir
from tests.server.conftest import make_settings
from tests.sources.servers import free_port

from .conftest import Loaded
from .server import load_world

SERVING = health_pb2.HealthCheckResponse.SERVING
ALL = TimeWindow(None, None)


def _sources_file(tmp_path: Path, url: str, table: str = "otel_logs") -> Path:
    path = tmp_path / "sources.yaml"
    path.write_text(f"sources:\n  clickhouse:\n    url: {url}\n    table: {table}\n    timeout_s: 10\n")
    return path


def test_evigate_sources_shows_clickhouse(
    clickhouse: Loaded, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sources", "--sources-file", str(_sources_file(tmp_path, clickhouse.server.url))]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith(f"clickhouse {clickhouse.server.url}: ready; version 18.16.1")
    assert f"table default.otel_logs: {clickhouse.demo_rows} rows" in line

    dead = f"http://127.0.0.1:{free_port()}"
    assert main(["sources", "--json", "--sources-file", str(_sources_file(tmp_path, dead))]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert rows[1]["name"] == "clickhouse" and rows[1]["state"] == "unreachable"


def test_the_url_alone_from_the_flag_or_the_environment(
    clickhouse: Loaded, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OTel exporter's otel_logs needs only the URL: `--clickhouse-url`, or the environment."""
    assert main(["sources", "--clickhouse-url", clickhouse.server.url]) == 0
    assert f"clickhouse {clickhouse.server.url}: ready" in capsys.readouterr().out
    monkeypatch.setenv("EVIGATE_CLICKHOUSE_URL", clickhouse.server.url)
    assert main(["sources"]) == 0
    assert f"table default.otel_logs: {clickhouse.demo_rows} rows" in capsys.readouterr().out


def test_a_malformed_section_is_named_at_start(tmp_path: Path) -> None:
    path = _sources_file(tmp_path, "http://ch:8123", table="a b")
    with pytest.raises(ConfigError, match=r"clickhouse\.table: not an identifier"):
        build_sources(make_settings(tmp_path, sources_file=path))


async def test_files_for_some_services_and_clickhouse_for_the_rest(
    clickhouse: Loaded, tmp_path: Path
) -> None:
    """The log tree holds order-service and gateway, ClickHouse the other services: one question
    about no service in particular sees all of them, newest first; a question about a service only
    ClickHouse holds is answered by it, the files named as left out."""
    files = tmp_path / "logs"
    files.mkdir()
    for service in ("order-service", "gateway"):
        shutil.copy(demo_data_dir() / "logs" / f"{service}.ndjson", files)
    load_world(
        clickhouse.server.url,
        "rest_app",
        demo_data_dir() / "logs",
        lambda s: s not in ("order-service", "gateway"),
    )
    settings = make_settings(
        tmp_path, logs_dir=files, sources_file=_sources_file(tmp_path, clickhouse.server.url, "rest_app")
    )
    app = App(settings, Components())
    await app.start()
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            request = health_pb2.HealthCheckRequest(service="evigate.source.clickhouse")
            assert (await stub.Check(request, timeout=5)).status == SERVING
        assert app.tools is not None
        question = LogsQuery(None, "ERROR", None, None, ALL, 10_000)
        page = await app.tools.query_logs(question)
        everything = LogFiles(LogConfig(root=demo_data_dir() / "logs")).query(question)
        assert page.total == everything.total
        assert "parsers" in page.extra and page.extra["pushed_down"] == ["level"]  # both answered
        times = [item["timestamp"] for item in page.items]
        assert times == sorted(times, reverse=True)
        only_there = await app.tools.query_logs(LogsQuery("payment-service", "ERROR", None, None, ALL, 5))
        assert only_there.total > 0 and "files" in only_there.extra["left_out"]
        view = await app.tools.services.refresh()
        assert "log" in view.services["payment-service"]  # the catalog knows ClickHouse's services
    finally:
        await app.stop(grace=0)
