"""examples/java/EvigateExample.java, compiled and run as a Java user would (issue 19, item 5):
classes generated with Debian's protoc and grpc_java_plugin from proto/ and from the two vendored
google/rpc protos (status, error_details; Debian's common-protos jar predates ErrorInfo), compiled
with javac against Debian's grpc-java jars, run against a served process. Chat, StreamChat,
GetTrace, SubmitFeedback and the decoded ErrorInfo / BadRequest of two failed calls."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.server.conftest import ROOT, SHARED_TOKEN, ServerProcess
from tests.server.test_java_client import PLUGIN, TOOLS, WELL_KNOWN, _classpath, _run

EXAMPLE = ROOT / "examples" / "java"


def test_the_java_example_runs_every_rpc_and_decodes_error_details(
    shared_server: ServerProcess, tmp_path: Path
) -> None:
    for tool in TOOLS:
        assert shutil.which(tool), f"{tool} missing: `python3 scripts/dev.py test` installs it"
    assert PLUGIN.exists(), "protobuf-compiler-grpc-java-plugin missing"
    generated, classes = tmp_path / "gen", tmp_path / "classes"
    generated.mkdir()
    classes.mkdir()
    ours = sorted(
        str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto" / "evigate" / "v1").glob("*.proto")
    )
    _run(
        "protoc", f"--plugin=protoc-gen-grpc-java={PLUGIN}", f"-I{ROOT / 'proto'}", f"-I{EXAMPLE / 'proto'}",
        f"-I{WELL_KNOWN}", f"--java_out={generated}", f"--grpc-java_out={generated}",
        *ours, "google/rpc/status.proto", "google/rpc/error_details.proto",
        cwd=tmp_path,
    )  # fmt: skip
    classpath = _classpath()
    _run(
        "javac", "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(classes),
        *(str(p) for p in generated.rglob("*.java")), str(EXAMPLE / "EvigateExample.java"),
        cwd=tmp_path,
    )  # fmt: skip
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
