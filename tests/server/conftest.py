"""Servers on 127.0.0.1 for the gRPC tests: in-process `App`s (grpc.aio) or `evigate serve`
subprocesses, each with its own SQLite file (or MariaDB database) and free port."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from evigate.server.agents.base import AgentBackend, Skill, StageOutput
from evigate.server.app import App, Components
from evigate.server.deadline import Deadline
from evigate.server.settings import Settings
from tests.support.server_proc import ServerProc
from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
HIGH_CPU_ZH = "payment-service 现在有 HighCPUUsage 告警吗？"
HIGH_CPU_EN = "Does payment-service have a HighCPUUsage alert right now?"
SHARED_TOKEN = "shared-test-token"


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "listen": "127.0.0.1:0",
        "state_dir": tmp_path / "state",
        "health_check_interval_s": 0.2,
        "grace_period_s": 5.0,
        "log_format": "text",
    }
    base.update(overrides)
    return Settings.of(**base)


class SlowPlanner:
    """Wraps a Planner: waits on `gate` (or `delay` seconds) before planning; counts calls."""

    def __init__(self, inner: Any, delay: float = 0.0, gate: asyncio.Event | None = None) -> None:
        self.inner = inner
        self.delay = delay
        self.gate = gate
        self.calls = 0
        self.started = asyncio.Event()

    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        self.calls += 1
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        result: StageOutput = await self.inner.plan(query, language, skills, deadline)
        return result


def offline_agents() -> AgentBackend:
    from evigate.server.agents.offline import build_offline_backend

    return build_offline_backend()


def slow_agents(delay: float = 0.0, gate: asyncio.Event | None = None) -> tuple[AgentBackend, SlowPlanner]:
    backend = offline_agents()
    planner = SlowPlanner(backend.planner, delay, gate)
    return dataclasses.replace(backend, planner=planner), planner


AppFactory = Callable[..., Awaitable[App]]


@pytest.fixture
async def app_factory(tmp_path: Path) -> AsyncIterator[AppFactory]:
    """Starts Apps in this event loop; every one is stopped at teardown."""
    apps: list[App] = []

    async def start(agents: AgentBackend | None = None, **overrides: Any) -> App:
        app = App(make_settings(tmp_path, **overrides), Components(agents=agents))
        await app.start()
        apps.append(app)
        return app

    yield start
    for app in apps:
        await app.stop(grace=0)


@pytest.fixture
async def app(app_factory: AppFactory) -> App:
    return await app_factory()


@pytest.fixture
async def channel(app: App) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(app.address) as ch:
        yield ch


# The one server-process harness (tests/support/server_proc.py); the old name stays for the tests.
ServerProcess = ServerProc


def _server_processes(directory: Path) -> Iterator[Callable[..., ServerProc]]:
    """Starts `evigate serve` processes on the service's own defaults (embedded SQLite under
    `directory`), each returned once it printed its banner; any still running is killed at teardown."""
    started: list[ServerProc] = []

    def start(*args: str, env: Mapping[str, str] | None = None) -> ServerProc:
        process = ServerProc(directory, name=f"server{len(started) + 1}", args=args, env=env, base_args=())
        started.append(process)
        return process.start().wait_serving()

    yield start
    for process in started:
        process.reap()


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[Callable[..., ServerProc]]:
    """`evigate serve` subprocesses in this test's tmp_path (killed at teardown if still up)."""
    yield from _server_processes(tmp_path)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    """One `evigate serve` on embedded defaults (plus a token) for a module of client tests."""
    directory = tmp_path_factory.mktemp("served")
    for start in _server_processes(directory):
        server = start(env={"EVIGATE_AUTH_TOKENS": SHARED_TOKEN, "EVIGATE_LOG_FORMAT": "json"})
        yield server
        server.stop()


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, interval: float = 0.05) -> None:
    until(predicate, within=timeout, what="condition", interval=interval)
