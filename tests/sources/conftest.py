"""Session-wide live servers: one exporter, Alertmanager, Prometheus (scraping the exporter every
second, evaluating rules every second, alerting to that Alertmanager) and VictoriaMetrics (scraping
the same exporter). Tests isolate themselves by a unique service label value, so sharing is safe.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest

from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.sources_config import QueryLimits, SourceSettings
from tests.support import waiting

from .exporter import Exporter
from .servers import Server, start_alertmanager, start_prometheus, start_victoria_metrics, wait_scraped

T = TypeVar("T")


@pytest.fixture(scope="session")
def exporter() -> Iterator[Exporter]:
    e = Exporter()
    e.start()
    yield e
    e.stop()


@dataclass(frozen=True)
class Servers:
    alertmanager: Server
    prometheus: Server
    victoria: Server


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory, exporter: Exporter) -> Iterator[Servers]:
    """All three started at once, then awaited together: their first scrapes overlap."""
    started: list[Server] = []
    try:
        started.append(start_alertmanager(tmp_path_factory.mktemp("alertmanager")))
        started.append(
            start_prometheus(tmp_path_factory.mktemp("prometheus"), exporter.port, started[0].port)
        )
        started.append(start_victoria_metrics(tmp_path_factory.mktemp("victoria"), exporter.port))
        wait_scraped(started[1])
        wait_scraped(started[2])
        yield Servers(*started)
    finally:
        for server in started:
            server.stop()


@pytest.fixture(scope="session")
def alertmanager_server(servers: Servers) -> Server:
    return servers.alertmanager


@pytest.fixture(scope="session")
def prometheus_server(servers: Servers) -> Server:
    return servers.prometheus


@pytest.fixture(scope="session")
def victoria_server(servers: Servers) -> Server:
    return servers.victoria


@dataclass(frozen=True)
class Store:
    """A Prometheus-compatible query endpoint under test."""

    flavor: str  # prometheus | victoria-metrics
    url: str

    async def settle(self) -> None:
        """VictoriaMetrics makes new series searchable on its own flush tick (up to ~10 s); its
        /internal/force_flush endpoint, meant for tests, does it now. Prometheus needs nothing."""
        if self.flavor == "victoria-metrics":
            async with httpx.AsyncClient() as client:
                (await client.get(f"{self.url}/internal/force_flush")).raise_for_status()

    async def eventually(
        self, probe: Callable[[], Awaitable[T | None]], what: str, within: float = 20.0
    ) -> T:
        async def settled() -> T | None:
            await self.settle()
            return await probe()

        return await eventually(settled, f"{what} in {self.flavor}", within)


@pytest.fixture(scope="session", params=["prometheus", "victoria-metrics"])
def store(request: pytest.FixtureRequest) -> Store:
    name = "prometheus_server" if request.param == "prometheus" else "victoria_server"
    server: Server = request.getfixturevalue(name)
    return Store(request.param, server.url)


def settings(name: str, url: str, **kwargs: Any) -> SourceSettings:
    return SourceSettings(name=name, url=url, **kwargs)


@pytest.fixture
async def prom(store: Store) -> AsyncIterator[Prometheus]:
    client = Prometheus(settings("prometheus", store.url), QueryLimits(max_series=5))
    yield client
    await client.aclose()


@pytest.fixture
def service() -> str:
    """A service name no other test uses."""
    return f"svc-{uuid.uuid4().hex[:8]}"


async def eventually(probe: Callable[[], Awaitable[T | None]], what: str, within: float = 20.0) -> T:
    """Poll an async probe until it returns something other than None/False; bounded."""

    def found(got: T | None) -> bool:
        return got is not None and got is not False

    value = await waiting.eventually(probe, found, within=within, what=what)
    assert value is not None
    return value
