"""Pod logs through the log reader: a dump's logs.txt and the API's logs (the previous container's
too) searched and summarised like any log file, each line naming its namespace, pod and container;
a log the API refuses is named as could-not-check."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evigate.server.queries.types import LogsQuery, PatternsQuery, TimeWindow, ToolError
from evigate.server.sources.kubernetes.live import LiveSettings
from evigate.server.sources.kubernetes.podlogs import cri_lines, split_containers
from evigate.server.sources.kubernetes.source import ApiCluster, DumpCluster
from evigate.server.sources.source_set import SourceSet
from tests.server.certs import Certs, make_certs
from tests.sources.kubernetes.apiserver import FakeApiServer, api_server
from tests.sources.test_source_set import FakeLogs

ANY = TimeWindow(None, None)
POD = "payments-7d9f8b6c5d-x2x4q"


def logs(service: str | None = "payments", **more: object) -> LogsQuery:
    fields: dict[str, object] = {"level": None, "keyword": None, "pattern": None, "window": ANY, "limit": 20}
    return LogsQuery(service=service, **{**fields, **more})  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def server(dump: Path, certs: Certs) -> Iterator[FakeApiServer]:
    with api_server(dump, certs) as fake:
        yield fake


@pytest.fixture
async def dumped(dump: Path) -> AsyncIterator[DumpCluster]:
    cluster = DumpCluster(dump)
    yield cluster
    await cluster.aclose()


@pytest.fixture
async def live(server: FakeApiServer, tmp_path: Path) -> AsyncIterator[ApiCluster]:
    config = server.kubeconfig(tmp_path / "kubeconfig")
    cluster = ApiCluster(LiveSettings(kubeconfig=str(config), context="test", timeout_s=2))
    yield cluster
    await cluster.aclose()


def test_a_dumps_logs_txt_is_cut_by_container_and_the_apis_times_become_cri_lines() -> None:
    text = (
        "==== START logs for container app of pod shop/web-1 ====\nhello\n"
        "==== END logs for container app of pod shop/web-1 ====\n"
        "==== START logs for container proxy of pod shop/web-1 ====\n"
        "==== END logs for container proxy of pod shop/web-1 ====\n"
    )
    assert split_containers(text, "main") == {"app": "hello\n"}  # an empty container holds no file
    assert split_containers("no markers\n", "main") == {"main": "no markers\n"}
    assert cri_lines('2026-07-08T11:59:00.1Z {"msg": "x"}\nplain\n') == (
        '2026-07-08T11:59:00.1Z stdout F {"msg": "x"}\nplain\n'
    )


async def test_a_dumps_pod_logs_are_searched_like_any_log_file(dumped: DumpCluster) -> None:
    page = await dumped.query_logs(logs(keyword="connection refused"))
    assert page.total == 1
    (item,) = page.items
    assert item["level"] == "ERROR" and item["service"] == "payments"
    assert (item["namespace"], item["pod"], item["container"]) == ("payments", POD, "payments")
    assert item["message"].startswith("cannot connect to ledger-db:5432")
    assert "ConnectionRefusedError" in item["exception"]  # the traceback read as the event's
    assert item["timestamp"].startswith("2026-07-08")


async def test_a_dumps_pod_logs_are_summarised_and_ranked(dumped: DumpCluster) -> None:
    summary = await dumped.summarize_logs(PatternsQuery("payments", "INFO", ANY, 10))
    assert {p["template"].split(" ")[0] for p in summary.items} >= {"starting", "cannot"}
    ranked = await dumped.query_logs(logs(query="connection refused by ledger-db"))
    assert ranked.items[0]["message"].startswith("cannot connect")


async def test_the_set_searches_files_and_pod_logs_as_one(dumped: DumpCluster) -> None:
    files = FakeLogs("files", [], services=("billing",))
    tools = SourceSet(sources=(files, dumped), logs=(files, dumped), cluster=(dumped,))
    page = await tools.query_logs(logs(keyword="ledger-db"))
    assert [item["pod"] for item in page.items] == [POD]
    with pytest.raises(ToolError, match="no logs of nowhere are available"):
        await dumped.query_logs(logs("nowhere"))


async def test_the_apis_logs_and_the_previous_containers_are_read_with_their_times(
    live: ApiCluster, server: FakeApiServer
) -> None:
    server.logs[("payments", POD, True)] = "panic: ledger-db unreachable after 30 retries\n"
    page = await live.query_logs(logs(window=TimeWindow(datetime(2026, 7, 8, 11, 59, tzinfo=UTC), None)))
    by_instance = {item.get("instance", "current"): item for item in page.items}
    assert by_instance["previous"]["message"].startswith("panic: ledger-db unreachable")
    assert {item["pod"] for item in page.items} == {POD}
    assert all(item["timestamp"].startswith("2026-07-08") for item in page.items)  # the runtime's times
    asked = [path for path, _ in server.requests if path.endswith("/log") or "/log?" in path]
    assert asked and all("timestamps=true" in path and "tailLines=" in path for path in asked)
    assert all(f"/namespaces/payments/pods/{POD}/log" in path for path in asked)  # only the service's pods


async def test_logs_the_api_refuses_are_could_not_check(live: ApiCluster, server: FakeApiServer) -> None:
    server.forbidden.add("pods/log")
    with pytest.raises(ToolError, match=r"could not check the pods' logs: .*forbidden by RBAC \(403\)"):
        await live.query_logs(logs())


async def test_logs_the_api_does_not_answer_in_time_are_could_not_check(
    server: FakeApiServer, tmp_path: Path
) -> None:
    config = server.kubeconfig(tmp_path / "kubeconfig")
    cluster = ApiCluster(LiveSettings(kubeconfig=str(config), context="test", timeout_s=0.5))
    try:
        await cluster.state()  # the lists answer; only the logs hang
        server.hanging.add("pods/log")
        with pytest.raises(ToolError, match=r"could not check the pods' logs: .*timed out after 0\.5 s"):
            await cluster.query_logs(logs())
    finally:
        await cluster.aclose()
