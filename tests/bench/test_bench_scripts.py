"""The bench scripts fail with a sentence, not a traceback, when a tool they need is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.fake_openai import FakeOpenAI, Reply
from tests.worlds import judge

ROOT = Path(__file__).resolve().parents[2]


def test_bench_grpc_without_h2load_says_what_to_install(tmp_path: Path) -> None:
    """Issue 19, item 12."""
    empty = tmp_path / "bin"
    empty.mkdir()
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_grpc.py"), "--rounds", "1", "--duration", "1"],
        cwd=ROOT,
        env={**os.environ, "PATH": str(empty)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert "h2load" in result.stderr and "nghttp2-client" in result.stderr


def test_bench_llm_judges_a_labelled_world_and_reports_fallbacks() -> None:
    """bench_llm over a tests/worlds world: its questions are judged by tests/worlds/judge, and an
    endpoint whose every reply is unusable shows as stage fallbacks, never as a FAILED session."""

    first = judge.questions("tidewater")[0]
    with FakeOpenAI(default=Reply(content="I cannot answer in JSON.")) as fake:
        result = subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "bench_llm.py"),
                "--base-url",
                fake.base_url,
                "--model",
                "scripted",
                "--world",
                str(ROOT / "tests" / "worlds" / "tidewater"),
                "--cases",
                first.id,
                "--mix",
                "llm",
                "--timeout",
                "60",
                "--show",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert fake.requests  # the stages did ask the endpoint
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"[llm] {first.id}" in out
    assert "round 1:" in out and "answer: " in out  # --show: what the session did
    assert "SUCCESS / FAILED    1 / 0" in out
    assert "correct             1 (100%)" in out  # the offline fallbacks answer it as the offline agents do
    assert "unsupported facts   0" in out and "placeholder answers 0" in out
    assert "'composer'" in out.split("stage fallbacks", 1)[1].splitlines()[0]


def test_bench_sentence_check_prints_the_cost_per_answer() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_sentence_check.py"), "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "answers: " in result.stdout and "sentence check per answer" in result.stdout
    assert "ms CPU per answer" in result.stdout


def test_bench_answers_reports_binding_tokens_and_language_per_world(tmp_path: Path) -> None:
    out = tmp_path / "answers.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_answers.py"), "--world", "demo", "--repeat", "1",
         "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "sentences bound        100.0%" in result.stdout
    assert "internal tokens        0" in result.stdout and "language mismatches    0" in result.stdout
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["bench"] == "bench_answers" and document["figures"]
