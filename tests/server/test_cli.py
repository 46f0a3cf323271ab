"""The `evigate` command as a user runs it: subprocesses against a served process."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.server.conftest import HIGH_CPU_ZH, ROOT, SHARED_TOKEN, VENV_BIN, ServerProcess
from tests.support.server_proc import free_port


def evigate(
    *args: str, server: ServerProcess | None = None, token: str | None = SHARED_TOKEN
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVIGATE_")}
    if server is not None:
        env["EVIGATE_TARGET"] = server.address
    if token is not None:
        env["EVIGATE_TOKEN"] = token
    return subprocess.run(
        [str(VENV_BIN / "evigate"), *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


# Fields of the evidence that only the trace and the viewer show.
INTERNAL = re.compile(r"template=|levels=|bm25=|dense=|threshold=|match=L\d|source=|\$\.\w+\[\d+\]")


def test_chat_answers_in_the_questions_language_with_no_internal_field(shared_server: ServerProcess) -> None:
    result = evigate("chat", "what's wrong with order-service?", server=shared_server)
    assert result.returncode == 0, result.stderr
    answer = result.stdout.split("\nverdict: ")[0]
    assert "language: en" in result.stdout, result.stdout
    outside_quotes = re.sub(r'"[^"\n]*"', " ", answer)
    assert not re.search(r"[\u4e00-\u9fff]", outside_quotes), answer
    assert not INTERNAL.search(answer), answer
    assert len(answer.splitlines()[0]) < 400, answer  # one line answers first, not a dump


def test_chat_prints_a_grounded_answer_and_the_session_to_trace(shared_server: ServerProcess) -> None:
    result = evigate("chat", HIGH_CPU_ZH, server=shared_server)
    assert result.returncode == 0, result.stderr
    assert "HighCPUUsage" in result.stdout and "92%" in result.stdout
    assert "verdict: PASS" in result.stdout
    session_id = result.stdout.split("session: ")[1].split()[0]

    trace = evigate("trace", session_id, server=shared_server)
    assert trace.returncode == 0, trace.stderr
    for expected in (
        "query_metrics",
        "$.alerts[",
        "gatekeeper: pass",
        "verdict: PASS",
        "answer:",
        "[claim-1]",
    ):
        assert expected in trace.stdout

    useful = evigate("feedback", session_id, "useful", server=shared_server)
    assert useful.returncode == 0 and "反馈已记录 (case " in useful.stdout
    again = evigate("feedback", session_id, "useful", "--json", server=shared_server)
    assert json.loads(again.stdout)["case_id"] in useful.stdout
    bad = evigate("feedback", session_id, "not_useful", server=shared_server)
    assert bad.returncode == 0
    listed = evigate("sessions", "--feedback", "not_useful", "--json", server=shared_server)
    assert session_id in [s["session_id"] for s in json.loads(listed.stdout)["sessions"]]
    readable = evigate("sessions", "--status", "success", server=shared_server)
    assert session_id in readable.stdout


def test_chat_stream_shows_each_stage(shared_server: ServerProcess) -> None:
    result = evigate("chat", "Does payment-service have a HighCPUUsage alert?", "--lang", "en", "--stream",
                     server=shared_server)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout
    order = ["▶ planner", "▶ [round 1] tool query_metrics", "▶ [round 1] executor", "▶ [round 1] gatekeeper",
             "▶ [round 1] verdict", "▶ composer", "session: "]  # fmt: skip
    positions = [lines.index(marker) for marker in order]
    assert positions == sorted(positions)
    json_lines = evigate("chat", HIGH_CPU_ZH, "--stream", "--json", server=shared_server).stdout.splitlines()
    assert "result" in json.loads(json_lines[-1]) and "plan" in json.loads(json_lines[0])


def test_chat_with_a_session_id_is_idempotent(shared_server: ServerProcess) -> None:
    first = evigate("chat", HIGH_CPU_ZH, "--session-id", "cli-idem-1", "--json", server=shared_server)
    second = evigate("chat", "another question", "--session-id", "cli-idem-1", "--json", server=shared_server)
    assert json.loads(first.stdout) == json.loads(second.stdout)


def test_check_a_file(shared_server: ServerProcess, tmp_path: Path) -> None:
    reply = json.loads(evigate("chat", HIGH_CPU_ZH, "--json", server=shared_server).stdout)
    evidence = tmp_path / "evidence.json"
    evidence.write_text(json.dumps(reply["evidence"], ensure_ascii=False))
    ok = evigate("check", reply["session_id"], str(evidence), server=shared_server)
    assert ok.returncode == 0 and "gatekeeper: pass" in ok.stdout
    forged = reply["evidence"]
    forged["claims"][0]["evidence_bindings"][0]["evidence_excerpt"] = "HighCPUUsage current=99%"
    evidence.write_text(json.dumps(forged))
    bad = evigate("check", reply["session_id"], str(evidence), "--json", server=shared_server)
    assert json.loads(bad.stdout)["result"]["severity"] == "reject"
    evidence.write_text('{"claims": "nope"}')
    broken = evigate("check", reply["session_id"], str(evidence), server=shared_server)
    assert broken.returncode == 1 and "not an executor_evidence_v2 document" in broken.stderr


def test_errors_are_one_clear_line_and_a_non_zero_exit(shared_server: ServerProcess) -> None:
    missing = evigate("trace", "no-such-session", server=shared_server)
    assert missing.returncode == 1
    assert missing.stderr.startswith("evigate: not found: session 'no-such-session' not found")
    invalid = evigate("chat", "x", "--session-id", "bad id", server=shared_server)
    assert invalid.returncode == 1 and "session_id" in invalid.stderr
    unauthenticated = evigate("sessions", server=shared_server, token="wrong")
    assert unauthenticated.returncode == 1 and "--token" in unauthenticated.stderr
    nobody = evigate("sessions", "--target", f"127.0.0.1:{free_port()}", "--timeout", "2")
    assert nobody.returncode == 1 and "cannot reach the server" in nobody.stderr
    usage = evigate("feedback", "s", "maybe")
    assert usage.returncode == 2


def test_serve_prints_its_address_and_stops_cleanly_on_sigterm(
    server_process: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = server_process("--log-format", "json")
    result = evigate("sessions", server=server, token=None)
    assert result.returncode == 0, result.stderr
    assert server.stop(signal.SIGTERM) == 0
    log = server.log.read_text()
    assert '"event": "settings"' in log and '"event": "stopped"' in log
    assert (tmp_path / ".evigate" / "evigate.db").exists()  # the embedded default database


def test_python_dash_m_server_serves_on_defaults(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVIGATE_")}
    env["EVIGATE_LISTEN"] = f"127.0.0.1:{port}"
    tree = str(Path.cwd() / ".venv" / "pkg")  # the package as scripts/dev.py links it
    proc = subprocess.Popen(
        [str(VENV_BIN / "python"), "-m", "evigate.server"], cwd=tmp_path, env={**env, "PYTHONPATH": tree},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"evigate serving on grpc://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0


def test_migrate(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'm.db'}"
    result = evigate("migrate", "--database-url", url)
    assert result.returncode == 0, result.stderr
    assert "migrated" in result.stdout and (tmp_path / "m.db").exists()


def test_cli_over_mutual_tls(server_process: Callable[..., ServerProcess], tmp_path: Path) -> None:
    from tests.server.certs import make_certs

    certs = make_certs(tmp_path / "certs")
    tls = {
        "EVIGATE_TLS_CERT": str(certs.server_cert),
        "EVIGATE_TLS_KEY": str(certs.server_key),
        "EVIGATE_TLS_CLIENT_CA": str(certs.ca),
    }
    server = server_process(env=tls)
    client = ("--ca", str(certs.ca), "--cert", str(certs.client_cert), "--key", str(certs.client_key))
    ok = evigate("sessions", *client, server=server, token=None)
    assert ok.returncode == 0, ok.stderr
    refused = evigate("sessions", "--ca", str(certs.ca), "--timeout", "5", server=server, token=None)
    assert refused.returncode == 1


def test_tokens_never_reach_the_logs(shared_server: ServerProcess) -> None:
    evigate("sessions", server=shared_server)
    evigate("sessions", server=shared_server, token="a-wrong-token")
    log = shared_server.log.read_text()
    assert '"rpc": "/evigate.v1.TraceService/ListSessions"' in log
    assert SHARED_TOKEN not in log and "a-wrong-token" not in log


def test_serve_explains_why_it_cannot_start(
    tmp_path: Path, mysql_database_factory: Callable[[], str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = evigate("serve", "--listen", f"127.0.0.1:{port}", "--state-dir", str(tmp_path / "a"))
    assert busy.returncode == 1 and "cannot listen on" in busy.stderr.splitlines()[-1]
    unmigrated = evigate("serve", "--listen", "127.0.0.1:0", "--database-url", mysql_database_factory())
    assert unmigrated.returncode == 1 and "evigate: cannot start" in unmigrated.stderr.splitlines()[-1]
    no_data = evigate(
        "serve", "--listen", "127.0.0.1:0", "--state-dir", str(tmp_path / "b"), "--data-dir", "/nope"
    )
    assert no_data.returncode == 1 and "configuration: data_dir" in no_data.stderr.splitlines()[-1]
    bad_flag = evigate("serve", "--agent-backend", "magic")
    assert bad_flag.returncode == 1 and "agent_backend" in bad_flag.stderr


def _readme_questions() -> list[tuple[str, ...]]:
    """The `evigate chat` lines of the README's Run section, as argument lists."""
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Run\n", 1)[1].split("\n## ", 1)[0]
    lines = [
        line.strip() for line in section.splitlines() if line.strip().startswith(".venv/bin/evigate chat ")
    ]
    return [tuple(shlex.split(line)[1:]) for line in lines]


def test_the_readme_questions_get_grounded_answers(shared_server: ServerProcess) -> None:
    questions = _readme_questions()
    assert len(questions) >= 3
    for args in questions:
        result = evigate(*args, server=shared_server)
        assert result.returncode == 0, (args, result.stderr)
        assert "verdict: PASS" in result.stdout, (args, result.stdout)
