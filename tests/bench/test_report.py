"""bench/report.py writes the README's benchmark table from the benches' JSON output, and only
from it: each row labelled in-sample / held-out and warm / cold, with the run's date and machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = """# x

Prose that the report must not touch: 42 ms.

<!-- bench-report:begin -->
| stale | table |
<!-- bench-report:end -->

After.
"""


def _result(folder: Path, bench: str, figures: list[dict[str, str]]) -> None:
    machine = {"date": "2026-12-03 14:00 UTC", "cores": 2, "load": [1.5, 2.25, 3.0], "python": "3.11.7"}
    document = {"bench": bench, "what": f"what {bench} does", "machine": machine, "figures": figures}
    (folder / f"{bench}.json").write_text(json.dumps(document))


def _report(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(ROOT / "bench" / "report.py"), "--results", str(tmp_path / "results"),
               "--readme", str(tmp_path / "README.md"), *extra]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_the_table_holds_every_figure_with_its_labels_and_nothing_else(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    _result(results, "bench_logs", [
        {"name": "cold first query", "value": "1.2 s (grep 0.8 s)", "sample": "synthetic", "cache": "cold"},
        {"name": "warm query p50", "value": "40 ms", "sample": "synthetic", "cache": "warm"},
    ])  # fmt: skip
    _result(results, "bench_patterns", [
        {"name": "mean GA, 8 loghub systems", "value": "0.97", "sample": "in-sample", "cache": "-"},
        {"name": "mean GA, other systems", "value": "0.88", "sample": "held-out", "cache": "-"},
    ])  # fmt: skip
    (tmp_path / "README.md").write_text(README)
    assert _report(tmp_path).returncode == 0
    text = (tmp_path / "README.md").read_text()
    assert "stale" not in text
    assert text.startswith("# x\n\nProse that the report must not touch: 42 ms.") and text.endswith(
        "After.\n"
    )
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 4  # one per figure
    assert rows[0].startswith(
        "| `bench_logs.py` | what bench_logs does | cold first query | 1.2 s (grep 0.8 s) |"
    )
    assert "| synthetic | cold | 2026-12-03 14:00 UTC, 2 cores, load 1.5/2.25/3 |" in rows[0]
    assert rows[1].startswith("|  |  | warm query p50 | 40 ms | synthetic | warm |")
    assert "| in-sample | - |" in rows[2] and "| held-out | - |" in rows[3]
    assert rows[2].startswith("| `bench_patterns.py` |")  # the table's own order: logs before patterns
    assert _report(tmp_path, "--check").returncode == 0  # rewriting again changes nothing
    (results / "bench_patterns.json").unlink()
    assert _report(tmp_path, "--check").returncode == 1  # a result went: the table is out of date


def test_a_result_without_labels_or_a_readme_without_markers_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    _result(results, "bench_x", [{"name": "speed", "value": "fast"}])
    (tmp_path / "README.md").write_text(README)
    refused = _report(tmp_path)
    assert refused.returncode == 2 and "without cache, sample" in refused.stderr
    _result(results, "bench_x", [{"name": "speed", "value": "fast", "sample": "synthetic", "cache": "-"}])
    (tmp_path / "README.md").write_text("# no markers\n")
    refused = _report(tmp_path)
    assert refused.returncode == 2 and "bench-report:begin" in refused.stderr


def test_the_readme_table_is_what_the_recorded_results_give() -> None:
    """The repository's own README: its benchmark table is bench/report.py's, from bench/results."""
    command = [sys.executable, str(ROOT / "bench" / "report.py"), "--check"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, "README.md's table is stale: run .venv/bin/python bench/report.py"
