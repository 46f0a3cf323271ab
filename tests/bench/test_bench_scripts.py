"""The bench scripts fail with a sentence, not a traceback, when a tool they need is missing."""

from __future__ import annotations

import json
import os
import re
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


def test_bench_llm_tells_the_model_from_its_fallbacks(tmp_path: Path) -> None:
    """bench_llm over a labelled world: the offline agents, the null model and the model answer the
    same question, judged by tests/worlds/judge. A model whose every reply is unusable is answered
    for by the offline fallbacks: correct, but model-authored 0 and nothing recovered."""

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
                "tidewater",
                "--cases",
                first.id,
                "--timeout",
                "60",
                "--show",
                "--server-cache",
                "warm",
                "--json",
                str(tmp_path / "bench_llm.json"),
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
    for contestant in ("offline", "null", "model"):
        assert f"[{contestant} tidewater] {first.id}" in out
    assert "answer: " in out  # --show
    assert "offline: correct 1/1, model-authored 1" in out
    assert "null: correct 1/1, model-authored 0" in out
    assert "model: correct 1/1, model-authored 0" in out  # the fallbacks' answer is not the model's
    assert "model over offline: recovered 0 of 0 offline misses, lost 0" in out
    # nonsense writes no sentence of the answer: every slot sentence is code's draft
    null = out.split("  null: ", 1)[1].split("  model: ", 1)[0]
    assert "model-written sentences: 0 of " in null and "answers with >=1 model sentence 0/1" in null
    model = out.split("  model: ", 1)[1]
    assert "FAILED 0; unsupported 0, over-statements 0, placeholders 0" in model
    assert "after the shared prefix)" in model  # the client's estimate of what a caching server reads
    assert "composer (unusable_output) 1" in model.split("fallbacks: ", 1)[1].splitlines()[0]
    # code first: code plans this question, quotes what it finds and its check passes it (the
    # model's Verifier not asked); that is not the model's either
    assert "handed to code: executor 1, planner 1, verifier 1;" in model
    assert (
        f"{first.id}" in out.split("[model tidewater] ", 1)[1] and "by code:executor,planner,verifier" in out
    )
    assert "seconds per session: mean" in model
    # the README's rows: labelled by world (tidewater grew with the code) and the server's state
    document = json.loads((tmp_path / "bench_llm.json").read_text(encoding="utf-8"))
    rows = {f["name"]: f for f in document["figures"]}
    assert (
        rows["bench_llm tidewater, model: offline misses recovered / offline answers lost"]["value"]
        == "0 of 0 / 0"
    )
    timing = rows["bench_llm tidewater, model: seconds per session, mean / median / max"]
    assert (timing["sample"], timing["cache"]) == ("in-sample", "warm")
    assert "(a subset: 1 chosen questions)" in document["what"]
    lines = document["raw"][0]["contestants"]["model"]["lines"]
    assert lines[first.id].startswith("ok ")


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
    prose = re.search(r"prose per answer\s+max (\d+)", result.stdout)
    assert prose is not None and int(prose.group(1)) <= 8, result.stdout
    assert "internal tokens        0" in result.stdout and "language mismatches    0" in result.stdout
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["bench"] == "bench_answers" and document["figures"]


def test_bench_clickhouse_runs_small_and_reports_its_own_time_per_call(tmp_path: Path) -> None:
    """bench_clickhouse end to end on a 2 MB corpus against a real clickhouse-server: the figures
    side by side with the file index, and evigate's own time per call over the same HTTP requests
    sent bare (live and replayed), for query_logs and summarize_logs."""
    out = tmp_path / "clickhouse.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_clickhouse.py"), "--size-mb", "2", "--services", "3",
         "--service", "svc-01", "--runs", "3", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    raw = json.loads(out.read_text(encoding="utf-8"))["raw"]
    assert raw["totals"][0] == raw["totals"][1] > 0  # the same rows found both ways
    for key in ("overhead", "summary_overhead"):
        measured = raw[key]
        assert measured["requests"] >= 2 and measured["answer_bytes"] > 0
        assert set(measured["replayed"]) == {"ours", "bare", "overhead"}
    assert "evigate's own time per query_logs call over the same 2 HTTP requests sent bare" in result.stdout
