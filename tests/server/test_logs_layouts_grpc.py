"""A PASS chat through gRPC on Kubernetes-layout logs (tests/server/k8s_logs, committed): CRI
records under /var/log/pods/<ns>_<pod>_<uid>/<container>/, a rotated .gz of JSON lines, logback text
with a stack trace, Chinese messages and one corrupt line. --logs-dir points the server at the tree;
alerts and knowledge stay the bundled world's."""

from __future__ import annotations

from pathlib import Path

import grpc
from google.protobuf.json_format import MessageToDict

from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    session_pb2,
    trace_service_pb2,
    trace_service_pb2_grpc,
    verdict_pb2,
)
from tests.server.conftest import AppFactory

K8S_LOGS = Path(__file__).with_name("k8s_logs") / "var" / "log"
POD = "pods/shop_payment-service-6b8f9c7d5-x7k2p_0c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f/payment-service"


async def test_a_log_question_on_kubernetes_pod_logs_passes(app_factory: AppFactory) -> None:
    app = await app_factory(logs_dir=K8S_LOGS)
    async with grpc.aio.insecure_channel(app.address) as channel:
        chat = chat_service_pb2_grpc.ChatServiceStub(channel)
        query = "payment-service 有 Connection is not available 的日志吗？"
        reply = await chat.Chat(chat_service_pb2.ChatRequest(query=query), timeout=60)
        assert reply.status == session_pb2.SESSION_STATUS_SUCCESS
        assert reply.verdict.verdict == verdict_pb2.VERDICT_LABEL_PASS
        # The service is the pod's Deployment; the message is logback's, without its separator.
        assert "payment-service - HikariPool-1" not in reply.answer
        assert "ERROR payment-service HikariPool-1 - Connection is not available" in reply.answer
        traces = trace_service_pb2_grpc.TraceServiceStub(channel)
        trace = (await traces.GetTrace(trace_service_pb2.GetTraceRequest(session_id=reply.session_id))).trace
    (logs,) = [MessageToDict(i.raw_result) for i in trace.tool_invocations if i.tool_name == "query_logs"]
    assert logs["total"] == 3
    assert logs["skipped_lines"] == 1 and logs["skipped_at"] == [f"{POD}/0.log:10 (binary)"]
    # Both parts of the rotated stream were read, each by its own parser.
    assert logs["parsers"] == {
        f"{POD}/0.log.20260708-230000.gz": "cri+json",
        f"{POD}/0.log": "cri+log4j_thread",
    }
    first = logs["logs"][0]
    assert (first["pod"], first["namespace"], first["container"]) == (
        "payment-service-6b8f9c7d5-x7k2p",
        "shop",
        "payment-service",
    )
    assert first["exception"].startswith("java.sql.SQLTransientConnectionException: HikariPool-1")
