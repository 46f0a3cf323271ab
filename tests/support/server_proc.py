"""The one harness for real server processes: tests/server, reliability, loop and fuzz tests, benches.

`ServerProc` runs `python -m evigate.server --listen 127.0.0.1:<port> …` (= `evigate serve`) as a
subprocess in its own work directory, stdout and stderr in one log file per start. The port is
chosen once, so a restarted process comes back at the same address with the same default identity
(`<hostname>:<port>`). Readiness is waited for, never slept for: `wait_ready()` polls the standard
health service (async tests), `wait_serving()` the "evigate serving on …" banner in the log (sync
tests, and TLS or token-guarded servers, where a plain health probe cannot connect).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.support.waiting import eventually, until

# A first start on a machine without a vector cache embeds the demo knowledge before it serves
# (about 10-20 s on two busy cores): the bound leaves room for that; it is a limit, not a wait.
READY_TIMEOUT_S = 60.0
SERVING = health_pb2.HealthCheckResponse.SERVING
# What the reliability tests want by default: JSON logs, quick health checks, a short drain.
FAST_ARGS = ("--log-format", "json", "--health-check-interval-s", "0.2", "--grace-period-s", "2")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProc:
    """One server subprocess; start(), wait_ready() / wait_serving(), stop() or kill(), start() again.

    `database_url` "": the embedded default (SQLite under the work directory's .evigate/).
    `base_args`: flags before `args` (FAST_ARGS unless given; `()` runs on the service's defaults)."""

    def __init__(
        self,
        workdir: Path,
        database_url: str = "",
        *,
        name: str = "server",
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        base_args: Sequence[str] = FAST_ARGS,
    ) -> None:
        self.workdir = workdir
        self.database_url = database_url
        self.name = name
        self.args = list(args)
        self.env = dict(env or {})
        self.base_args = list(base_args)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.{self.starts}.log"

    @property
    def log(self) -> Path:
        """The current start's log file."""
        return self.log_path

    def start(self, *, args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> ServerProc:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        database = ["--database-url", self.database_url] if self.database_url else []
        command = [
            sys.executable,
            "-m",
            "evigate.server",
            "--listen",
            self.address,
            *database,
            *self.base_args,
            *self.args,
            *args,
        ]
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                command,
                cwd=self.workdir,
                env={**os.environ, **self.env, **(env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return self

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _exited(self, what: str) -> AssertionError:
        return AssertionError(f"{self.name} exited {what}:\n{self.log_text()[-4000:]}")

    def wait_serving(self, within: float = READY_TIMEOUT_S) -> ServerProc:
        """Blocks until this start printed its "serving on <scheme>://<address>" banner."""
        banner = f"://{self.address}"

        def serving() -> bool:
            if not self.running():
                raise self._exited("during start-up")
            text = self.log_path.read_text(errors="replace")
            return any(line.startswith("evigate serving on") and banner in line for line in text.splitlines())

        until(serving, within=within, what=f"{self.name} serving", detail=lambda: self.log_text()[-4000:])
        return self

    async def wait_ready(self, within: float = READY_TIMEOUT_S) -> None:
        """Polls grpc.health.v1 until SERVING; fails early if the process died."""
        async with grpc.aio.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)

            async def probe() -> bool:
                if not self.running():
                    raise self._exited("during start-up")
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                except grpc.aio.AioRpcError:
                    return False
                return bool(reply.status == SERVING)

            try:
                await eventually(probe, bool, within=within, what=f"{self.name} SERVING")
            except AssertionError as error:
                raise AssertionError(f"{error}\n{self.log_text()[-4000:]}") from None

    async def health(self) -> int:
        async with grpc.aio.insecure_channel(self.address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=2.0
            )
            return int(reply.status)

    def send_signal(self, sig: int) -> None:
        assert self.proc is not None, "not started"
        self.proc.send_signal(sig)

    def kill(self, sig: int = signal.SIGKILL, timeout: float = 20.0) -> int:
        """Sends `sig` (if still running) and waits: the exit status."""
        assert self.proc is not None, "not started"
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        """A graceful stop (SIGTERM): the exit status; None when it was never started."""
        return None if self.proc is None else self.kill(sig, timeout)

    def reap(self) -> None:
        """Teardown: a process still running is killed."""
        if self.running():
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(10)

    def log_text(self) -> str:
        return "\n".join(
            (self.workdir / f"{self.name}.{n}.log").read_text(errors="replace")
            for n in range(1, self.starts + 1)
            if (self.workdir / f"{self.name}.{n}.log").exists()
        )

    def log_events(self) -> list[dict[str, Any]]:
        """Every JSON log line of every start."""
        events = []
        for line in self.log_text().splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
        return events
