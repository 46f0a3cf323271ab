"""What the reliability, loop and fuzz tests and the benches drive real servers with.

The server processes themselves are tests/support/server_proc.py's `ServerProc` (re-exported here,
with `free_port`). `db_rows()` reads the database directly (SQLite or MariaDB) so tests check what
was written, not what an RPC says; `Client` holds the stubs a test calls.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlparse

import grpc
import pymysql
from grpc_health.v1 import health_pb2_grpc

from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from tests.support.server_proc import READY_TIMEOUT_S, SERVING, ServerProc, free_port
from tests.support.waiting import holds

__all__ = [
    "QUESTIONS",
    "READY_TIMEOUT_S",
    "SERVING",
    "Client",
    "ServerProc",
    "db_rows",
    "free_port",
    "self_evaluation",
    "wait_for",
]

# Offline questions over the bundled demo world that end in SUCCESS.
QUESTIONS = (
    "Does payment-service have a HighCPUUsage alert right now?",
    "payment-service 现在有 HighCPUUsage 告警吗？",
    "inventory-service 有 HikariCP 连接池耗尽的日志吗？",
    "order-service 最近 30 分钟有 ERROR 日志吗？",
)


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
