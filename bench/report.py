"""Every figure of the README's benchmark table, from the benches' own JSON output.

    .venv/bin/python bench/report.py [--results bench/results] [--run NAME ...] [--readme README.md] [--check]

Reads `<results>/<bench>.json` (written by `bench/<bench>.py --json FILE`; `--run NAME` runs that
bench first, with its default arguments) and rewrites the part of the README between the marker
comments `<!-- bench-report:begin -->` and `<!-- bench-report:end -->`: one row per figure, with
the date and machine (cores, load average) of the run that measured it, and whether it is in-sample
or held-out, warm or cold. Nothing else in the README is touched; a figure no bench wrote is not in
the table. `--check` exits 1 when the README's table differs from what the results give.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- bench-report:begin -->", "<!-- bench-report:end -->"
# Benches in the order the table lists them (any other result file comes after, by name).
ORDER = (
    "bench_gatekeeper", "bench_storage", "bench_tools", "bench_knowledge", "eval_retrieval", "bench_logs",
    "bench_clickhouse", "bench_patterns", "bench_discovery", "bench_k8s", "bench_pipeline", "bench_grpc",
    "bench_web", "bench_mcp", "bench_mixed", "bench_memory", "bench_sentence_check", "bench_answers",
)  # fmt: skip


class ReportError(Exception):
    """A result file that does not say what the table needs."""


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def load(results: Path) -> list[dict[str, Any]]:
    documents = []
    for path in sorted(results.glob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ReportError(f"{path.name}: not JSON ({error})") from None
        for key in ("bench", "what", "machine", "figures"):
            if key not in document:
                raise ReportError(f"{path.name}: no {key!r}")
        for figure in document["figures"]:
            missing = {"name", "value", "sample", "cache"} - set(figure)
            if missing:
                raise ReportError(f"{path.name}: a figure without {', '.join(sorted(missing))}")
        documents.append(document)
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(documents, key=lambda d: (rank.get(d["bench"], len(rank)), d["bench"]))


def table(documents: Sequence[dict[str, Any]]) -> str:
    """The README's block: how to reproduce, then one row per figure."""
    lines = [
        BEGIN,
        "<!-- written by bench/report.py from bench/results/*.json: run the benches, not an editor -->",
        "",
        "| bench | what | figure | value | data | cache | measured |",
        "|---|---|---|---|---|---|---|",
    ]
    for document in documents:
        machine = document["machine"]
        load = "/".join(f"{value:g}" for value in machine.get("load", []))
        measured = f"{machine.get('date', '?')}, {machine.get('cores', '?')} cores, load {load}"
        if machine.get("commit"):
            measured += f", at {machine['commit']}"
        first = True
        for figure in document["figures"]:
            bench, what = (f"`{document['bench']}.py`", _cell(document["what"])) if first else ("", "")
            labels = (figure["sample"], figure["cache"], measured if first else "")
            row = (bench, what, _cell(figure["name"]), _cell(figure["value"]), *labels)
            lines.append("| " + " | ".join(row) + " |")
            first = False
    if not documents:
        lines.append("| (no results: run the benches with `--json`) | | | | | | |")
    lines += ["", END]
    return "\n".join(lines)


def rewrite(readme: str, block: str) -> str:
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise ReportError(f"the README has no {BEGIN} … {END} section")
    return readme[:start] + block + readme[end + len(END) :]


def run_bench(name: str, results: Path) -> None:
    script = ROOT / "bench" / f"{name}.py"
    if not script.is_file():
        raise ReportError(f"no bench named {name}")
    results.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, str(script), "--json", str(results / f"{name}.json")], check=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--run", nargs="*", default=[], help="benches to run first (e.g. bench_logs)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the README is not up to date")
    args = parser.parse_args(argv)
    try:
        for name in args.run:
            run_bench(name, args.results)
        block = table(load(args.results))
        readme = args.readme.read_text(encoding="utf-8")
        updated = rewrite(readme, block)
    except ReportError as error:
        print(f"report: {error}", file=sys.stderr)
        return 2
    if args.check:
        return 0 if updated == readme else 1
    args.readme.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
