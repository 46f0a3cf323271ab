"""Where an operator sees the live sources: `evigate sources` and the gRPC health entries."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.app import App, Components
from evigate.server.cli import main
from tests.server.conftest import make_settings

from .conftest import Servers
from .servers import free_port

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def test_evigate_sources_lists_each_source_with_its_state(
    servers: Servers, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    code = main(["sources", "--prometheus-url", servers.prometheus.url, "--alertmanager-url", dead])
    logs, prometheus, alertmanager = capsys.readouterr().out.splitlines()
    assert logs.startswith("logs ") and ": ready; " in logs
    assert code == 1  # one source is not ready: scripts can tell
    assert prometheus.startswith(f"prometheus {servers.prometheus.url}: ready; version ")
    assert alertmanager.startswith(f"alertmanager {dead}: UNREACHABLE; alertmanager at {dead} is unreachable")

    code = main(["sources", "--json", "--alertmanager-url", servers.alertmanager.url])
    logs_row, row = json.loads(capsys.readouterr().out)
    assert logs_row["name"] == "logs" and logs_row["state"] == "ready"
    assert code == 0 and row["state"] == "ready" and row["version"] and row["settings"]["auth"] == "none"

    assert main(["sources"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("no live source configured")


async def test_health_has_an_entry_per_source_and_a_down_one_leaves_the_service_serving(
    tmp_path: Path, servers: Servers
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    settings = make_settings(tmp_path, prometheus_url=servers.prometheus.url, alertmanager_url=dead)
    app = App(settings, Components())
    await app.start()
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)

            async def status(service: str) -> int:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                return int(reply.status)

            assert await status("evigate.source.prometheus") == SERVING
            assert await status("evigate.source.alertmanager") == NOT_SERVING
            assert await status("") == SERVING
            assert await status("evigate.v1.ChatService") == SERVING
    finally:
        await app.stop(grace=0)
