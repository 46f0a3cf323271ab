"""examples/java/EvigateExample.java, compiled and run as a Java user would (issue 19, item 5):
classes generated with Debian's protoc and grpc_java_plugin from proto/ and from the two vendored
google/rpc protos (status, error_details; Debian's common-protos jar predates ErrorInfo), compiled
with javac against Debian's grpc-java jars, run against a served process. Chat, StreamChat,
GetTrace, SubmitFeedback and the decoded ErrorInfo / BadRequest of two failed calls."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import ROOT, SHARED_TOKEN, ServerProcess
from tests.server.test_java_client import _run, build_java

EXAMPLE = ROOT / "examples" / "java"


def test_the_java_example_runs_every_rpc_and_decodes_error_details(
    shared_server: ServerProcess, tmp_path: Path
) -> None:
    classes, classpath = build_java(
        tmp_path,
        EXAMPLE / "EvigateExample.java",
        includes=(EXAMPLE / "proto",),
        protos=("google/rpc/status.proto", "google/rpc/error_details.proto"),
    )
    host, port = shared_server.address.rsplit(":", 1)
    result = _run(
        "java", "-cp", f"{classes}:{classpath}", "EvigateExample", host, port, SHARED_TOKEN, cwd=tmp_path
    )
    lines = result.stdout.splitlines()
    assert lines[-1] == "OK", result.stdout + result.stderr
    assert any(line.startswith("StreamChat ") and "plan > " in line for line in lines)
    assert any("reason INVALID_CHAT_REQUEST" in line for line in lines)
    assert any(line.strip().startswith("language:") for line in lines)
    assert any("NOT_FOUND reason SESSION_NOT_FOUND" in line for line in lines)
