"""The live mode against an HTTPS API server on loopback serving the API's responses (made from
the generated cluster) with a bearer token: pagination with `continue`, no watch, no Secret, a 403
and a timeout named as could-not-check, namespaces restricted, the kubeconfig's context chosen."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evigate.server.sources.kubernetes.dump import read_dump
from evigate.server.sources.kubernetes.live import LiveCluster, LiveSettings
from evigate.server.sources.kubernetes.query import ObjectFilter, objects
from tests.server.certs import Certs, make_certs
from tests.sources.kubernetes.apiserver import TOKEN, FakeApiServer, api_server


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def server(dump: Path, certs: Certs) -> Iterator[FakeApiServer]:
    with api_server(dump, certs) as fake:
        yield fake


def _live(server: FakeApiServer, tmp_path: Path, **more: object) -> LiveCluster:
    config = server.kubeconfig(tmp_path / "kubeconfig")
    return LiveCluster(LiveSettings(kubeconfig=str(config), context="test", **more))  # type: ignore[arg-type]


async def test_the_live_state_is_the_dumps_state_read_page_by_page(
    server: FakeApiServer, dump: Path, tmp_path: Path
) -> None:
    live = _live(server, tmp_path)
    try:
        state = await live.state()
    finally:
        await live.aclose()
    assert not state.unavailable and not state.unread
    expected = read_dump(dump)
    assert objects(state, ObjectFilter()) == objects(expected, ObjectFilter())
    pods = [path for path, _ in server.requests if path.startswith("/api/v1/pods")]
    assert len(pods) == 1  # fewer pods than a page
    assert all(auth == f"Bearer {TOKEN}" for _, auth in server.requests)
    assert not any("secrets" in path or "watch" in path for path, _ in server.requests)


async def test_a_list_longer_than_a_page_is_followed_by_continue(
    server: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("evigate.server.sources.kubernetes.live.PAGE", 2)
    live = _live(server, tmp_path)
    try:
        state = await live.state()
    finally:
        await live.aclose()
    pods = [path for path, _ in server.requests if path.startswith("/api/v1/pods")]
    assert (
        len(state.of("Pod")) == len(server.objects["pods"]) and len(pods) == (len(state.of("Pod")) + 1) // 2
    )
    assert all("limit=2" in p for p in pods) and sum("continue=" in p for p in pods) == len(pods) - 1


async def test_a_403_and_a_timeout_are_named_and_the_rest_is_read(
    server: FakeApiServer, tmp_path: Path
) -> None:
    server.forbidden.add("nodes")
    server.hanging.add("jobs")
    live = _live(server, tmp_path, timeout_s=0.5)
    try:
        state = await live.state()
    finally:
        await live.aclose()
    assert state.unavailable["Node"].startswith("forbidden by RBAC (403)")
    assert "cannot list resource" in state.unavailable["Node"]
    assert state.unavailable["Job"] == "timed out after 0.5 s"
    assert sum(path.startswith("/apis/batch/v1/jobs") for path, _ in server.requests) == 1  # not retried
    assert set(state.unavailable) == {"Node", "Job"}
    assert (
        objects(state, ObjectFilter(kind="Pod", namespace="orders"))[0]["problems"][0] == "CrashLoopBackOff"
    )


async def test_namespaces_restrict_what_is_listed(server: FakeApiServer, tmp_path: Path) -> None:
    live = _live(server, tmp_path, namespaces=("payments", "orders"))
    try:
        state = await live.state()
    finally:
        await live.aclose()
    assert state.namespaces() == ["orders", "payments"]
    listed = {path.split("?")[0] for path, _ in server.requests}
    assert "/api/v1/namespaces/payments/pods" in listed and "/api/v1/pods" not in listed


async def test_a_pods_log_is_read_with_the_previous_containers(server: FakeApiServer, tmp_path: Path) -> None:
    server.logs[("payments", "payments-7d9f8b6c5d-x2x4q", True)] = "ConnectionRefusedError: ledger-db\n"
    live = _live(server, tmp_path)
    try:
        text = await live.pod_log("payments", "payments-7d9f8b6c5d-x2x4q", "payments", previous=True)
    finally:
        await live.aclose()
    assert text == "ConnectionRefusedError: ledger-db\n"
    assert any(
        "previous=true" in path and path.startswith("/api/v1/namespaces/payments/pods/")
        for path, _ in server.requests
    )
