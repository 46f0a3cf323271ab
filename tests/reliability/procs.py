"""Real server processes for the reliability, loop and fuzz tests and the mixed bench.

`ServerProc` runs `python -m evigate.server --listen 127.0.0.1:<port> --database-url URL …` as a subprocess
with JSON logs in a file; `wait_ready()` polls the standard health service in a bounded loop (never
a fixed sleep). The port is chosen once, so a restarted process comes back at the same address with
the same default identity (`<hostname>:<port>`). `db_rows()` reads the database directly (SQLite or
MariaDB) so tests check what was written, not what an RPC says.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import grpc
import pymysql
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from tests.support.waiting import holds

READY_TIMEOUT_S = 30.0
SERVING = health_pb2.HealthCheckResponse.SERVING

# Offline questions over the bundled demo world that end in SUCCESS.
QUESTIONS = (
    "Does payment-service have a HighCPUUsage alert right now?",
    "payment-service 现在有 HighCPUUsage 告警吗？",
    "inventory-service 有 HikariCP 连接池耗尽的日志吗？",
    "order-service 最近 30 分钟有 ERROR 日志吗？",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProc:
    """One `python -m evigate.server` subprocess; start(), wait_ready(), kill() and start() again."""

    def __init__(
        self,
        workdir: Path,
        database_url: str,
        *,
        name: str = "server",
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.database_url = database_url
        self.name = name
        self.args = list(args)
        self.env = dict(env or {})
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.{self.starts}.log"

    def start(self, *, args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> ServerProc:
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        command = [
            sys.executable,
            "-m",
            "evigate.server",
            "--listen",
            self.address,
            "--database-url",
            self.database_url,
            "--log-format",
            "json",
            "--health-check-interval-s",
            "0.2",
            "--grace-period-s",
            "2",
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

    async def wait_ready(self, within: float = READY_TIMEOUT_S) -> None:
        """Polls grpc.health.v1 until SERVING; fails early if the process died."""
        deadline = time.monotonic() + within
        async with grpc.aio.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    raise AssertionError(f"{self.name} exited during start-up:\n{self.log_text()[-4000:]}")
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                    if reply.status == SERVING:
                        return
                except grpc.aio.AioRpcError:
                    pass
                await asyncio.sleep(0.05)
        raise AssertionError(f"{self.name} not SERVING within {within}s:\n{self.log_text()[-4000:]}")

    async def health(self) -> int:
        async with grpc.aio.insecure_channel(self.address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=2.0
            )
            return int(reply.status)

    def kill(self, sig: int = signal.SIGKILL, timeout: float = 20.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill(signal.SIGTERM)

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


def db_rows(url: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Runs one read query straight against the database behind `url` (SQLite or MariaDB)."""
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[1]
        lite = sqlite3.connect(path, timeout=30)
        try:
            return [tuple(row) for row in lite.execute(sql.replace("%s", "?"), params)]
        finally:
            lite.close()
    parsed = urlparse(url.replace("mysql+aiomysql", "mysql"))
    conn = pymysql.connect(
        host=parsed.hostname or "127.0.0.1",
        port=parsed.port or 3306,
        user=parsed.username or "root",
        password=parsed.password or "",
        database=parsed.path.lstrip("/"),
        charset="utf8mb4",
    )
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql, tuple(params) or None)
            return [tuple(row) for row in cursor.fetchall()]
    finally:
        conn.close()


def self_evaluation(url: str, session_id: str) -> dict[str, Any] | None:
    rows = db_rows(url, "SELECT self_evaluation FROM diagnosis_session WHERE session_id = %s", (session_id,))
    if not rows or rows[0][0] is None:
        return None
    value = rows[0][0]
    return json.loads(value) if isinstance(value, str | bytes) else dict(value)


async def wait_for(predicate: Callable[[], bool], within: float, what: str, interval: float = 0.1) -> None:
    """Bounded polling for a condition another process brings about."""
    await holds(predicate, within=within, what=what, interval=interval)


class Client:
    """The four stubs a test drives, over one grpc.aio channel."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.chat_stub = chat_service_pb2_grpc.ChatServiceStub(channel)
        self.feedback_stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
        self.trace_stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        self.health_stub = health_pb2_grpc.HealthStub(channel)

    async def chat(
        self, query: str, session_id: str = "", language: str = "", rpc_timeout: float = 60.0
    ) -> chat_service_pb2.ChatResponse:
        request = chat_service_pb2.ChatRequest(query=query, session_id=session_id, language=language)
        response: chat_service_pb2.ChatResponse = await self.chat_stub.Chat(request, timeout=rpc_timeout)
        return response

    async def feedback(
        self, session_id: str, useful: bool, rpc_timeout: float = 30.0
    ) -> feedback_service_pb2.SubmitFeedbackResponse:
        from evigate.v1 import session_pb2

        value = session_pb2.FEEDBACK_USEFUL if useful else session_pb2.FEEDBACK_NOT_USEFUL
        request = feedback_service_pb2.SubmitFeedbackRequest(session_id=session_id, feedback=value)
        response: feedback_service_pb2.SubmitFeedbackResponse = await self.feedback_stub.SubmitFeedback(
            request, timeout=rpc_timeout
        )
        return response

    async def trace(self, session_id: str, rpc_timeout: float = 30.0) -> trace_service_pb2.GetTraceResponse:
        request = trace_service_pb2.GetTraceRequest(session_id=session_id)
        response: trace_service_pb2.GetTraceResponse
        response = await self.trace_stub.GetTrace(request, timeout=rpc_timeout)
        return response
