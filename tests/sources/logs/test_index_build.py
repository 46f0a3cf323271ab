"""The log index built in the background from start-up: its progress where an operator looks (the
gRPC health entry of the log source, `evigate sources`), persisted beside the data, and a stop that
returns while the build is still running."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.app import App, Components
from evigate.server.cli import main
from evigate.server.grpc.health import DETAIL_KEY
from evigate.server.sources.logs import LogConfig, LogReader, LogSearch
from evigate.server.sources.logs.building import IndexBuild
from evigate.server.tools import demo_data_dir
from tests.server.conftest import make_settings
from tests.support.waiting import eventually

SERVING = health_pb2.HealthCheckResponse.SERVING


def _data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "world"
    shutil.copytree(demo_data_dir(), data)
    return data


async def test_progress_shows_in_health_and_sources_and_the_index_persists_beside_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _data_dir(tmp_path)
    app = App(make_settings(tmp_path, data_dir=data), Components())
    await app.start()
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)

            async def check() -> tuple[int, str]:
                call = stub.Check(health_pb2.HealthCheckRequest(service="evigate.source.logs"), timeout=5)
                reply = await call
                trailers = dict(await call.trailing_metadata() or ())
                return int(reply.status), str(trailers.get(DETAIL_KEY, ""))

            status, detail = await eventually(
                check, lambda got: got[1].startswith("index ready"), within=60, what="the log index built"
            )
        assert status == SERVING
        assert "5/5 files" in detail
    finally:
        await app.stop(grace=0)
    assert (data / "logs" / ".evigate-index.sqlite3").is_file()
    assert main(["sources", "--json", "--data-dir", str(data), "--state-dir", str(tmp_path / "state")]) == 0
    logs = json.loads(capsys.readouterr().out)[0]
    assert logs["name"] == "logs" and logs["index"]["files_done"] == logs["index"]["files_total"] == 5
    assert logs["index"]["percent"] == 100.0


async def test_a_build_asked_to_stop_inside_a_file_ends_stopped_and_queries_still_answer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    for i in range(3):
        lines = [
            json.dumps({"time": f"2026-07-08T10:00:{s:02d}Z", "level": "info", "msg": f"{i}-{s}"})
            for s in range(60)
        ]
        (root / f"svc-{i}.log").write_text("\n".join(lines) + "\n")
    reader = LogReader(LogConfig(root=root))
    consulted = threading.Event()
    release = threading.Event()
    original = reader.tree.index

    def slow_index(entry, stop=None, progress=None):  # type: ignore[no-untyped-def]
        consulted.set()
        release.wait(timeout=30)  # held until the test has asked the build to stop
        return original(entry, stop, progress)

    reader.tree.index = slow_index  # type: ignore[method-assign]
    build = IndexBuild(reader, log_every_s=0.05)
    build.start()
    await asyncio.to_thread(consulted.wait, 30)
    assert build.progress.state == "building" and build.progress.files_total == 3
    build.request_stop()  # while the thread is inside its first file
    release.set()
    await build.stop()
    assert build.progress.state == "stopped"
    assert build.progress.files_done < 3
    # A query still answers: what the build did not index is indexed (or scanned) on demand.
    assert reader.search(LogSearch(limit=500)).total == 180
