"""A Java client generated from proto/ with Debian's packages only (protoc, grpc-java plugin,
grpc-java, protobuf-java, Netty, perfmark, geronimo annotations), compiled with javac and run
against a served process. `.ci/run` installs the packages, so this never skips in CI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.server.conftest import ROOT, SHARED_TOKEN, ServerProcess

JAVA_DIR = Path("/usr/share/java")
JARS = (
    "grpc-api", "grpc-context", "grpc-core", "grpc-netty", "grpc-protobuf", "grpc-protobuf-lite", "grpc-stub",
    "protobuf", "guava", "failureaccess", "perfmark-api", "geronimo-annotation-1.3-spec",
    "netty-buffer", "netty-codec", "netty-codec-http", "netty-codec-http2", "netty-common", "netty-handler",
    "netty-handler-proxy", "netty-codec-socks", "netty-resolver", "netty-transport",
    "netty-transport-native-unix-common", "error_prone_annotations",
)  # fmt: skip
TOOLS = ("protoc", "javac", "java")
PLUGIN = Path("/usr/bin/grpc_java_plugin")
WELL_KNOWN = Path("/usr/include")  # libprotobuf-dev: google/protobuf/*.proto


def _classpath() -> str:
    found = [JAVA_DIR / f"{name}.jar" for name in JARS if (JAVA_DIR / f"{name}.jar").exists()]
    missing = {"grpc-api", "grpc-netty", "grpc-stub", "protobuf", "netty-codec-http2"} - {
        p.stem for p in found
    }
    assert not missing, f"Debian Java packages missing: {missing}; run .ci/run's apt-get line"
    return ":".join(str(p) for p in found)


def _run(*command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, f"{command[0]} failed:\n{result.stdout}\n{result.stderr}"
    return result


def build_java(
    tmp_path: Path, main: Path, *, includes: tuple[Path, ...] = (), protos: tuple[str, ...] = ()
) -> tuple[Path, str]:
    """Generates the Java classes of proto/ (plus `protos` found under `includes`) with Debian's
    protoc and grpc_java_plugin and compiles them with `main`; returns (classes dir, classpath)."""
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
        "protoc", f"--plugin=protoc-gen-grpc-java={PLUGIN}", f"-I{ROOT / 'proto'}",
        *(f"-I{d}" for d in includes), f"-I{WELL_KNOWN}",
        f"--java_out={generated}", f"--grpc-java_out={generated}", *ours, *protos,
        cwd=tmp_path,
    )  # fmt: skip
    classpath = _classpath()
    _run(
        "javac", "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(classes),
        *(str(p) for p in generated.rglob("*.java")), str(main),
        cwd=tmp_path,
    )  # fmt: skip
    return classes, classpath


def test_java_client_calls_chat_feedback_and_trace(shared_server: ServerProcess, tmp_path: Path) -> None:
    classes, classpath = build_java(tmp_path, Path(__file__).parent / "java" / "EvigateClient.java")
    host, port = shared_server.address.rsplit(":", 1)
    result = _run(
        "java", "-cp", f"{classes}:{classpath}", "EvigateClient", host, port, SHARED_TOKEN,
        cwd=tmp_path,
    )  # fmt: skip
    assert result.stdout.startswith("OK "), result.stdout + result.stderr
