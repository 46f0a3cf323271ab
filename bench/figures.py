"""What a bench writes with `--json FILE`, for bench/report.py: the machine it ran on (cores, load
average, date) and its figures, each labelled with what it says about itself.

Each figure: `name` (what was measured), `value` (the text the README shows), and two labels:
`sample` — `in-sample` (the code or its settings were developed or calibrated on this data),
`held-out` (they were not), `questions-first` (the questions were committed before the code that
answers them, which has been worked on since with them in view: neither in-sample nor held-out),
or `synthetic` (data the bench generates; there is no sample to speak
of) — and `cache` — `cold` (first run: nothing built, nothing cached), `warm` (after a first run),
or `-` when it does not apply."""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

SAMPLES = ("in-sample", "held-out", "questions-first", "synthetic")
CACHES = ("cold", "warm", "-")


@dataclass(frozen=True)
class Figure:
    name: str
    value: str
    sample: str = "synthetic"
    cache: str = "-"

    def __post_init__(self) -> None:
        if self.sample not in SAMPLES or self.cache not in CACHES:
            raise ValueError(f"figure {self.name!r}: sample in {SAMPLES}, cache in {CACHES}")


def machine() -> dict[str, object]:
    """Where, when and what: the figures of a loaded machine are not those of an idle one."""
    load = os.getloadavg()
    head = subprocess.run(
        ["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count() or 0,
        "load": [round(value, 2) for value in load],
        "python": platform.python_version(),
        "commit": head.stdout.strip() or None,  # None outside a git checkout
    }


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, help="also write the figures to this file (bench/report.py)")


def write(path: Path | None, bench: str, what: str, figures: list[Figure], raw: object = None) -> None:
    """Writes the bench's figures (and its raw measurements, for whoever wants more) to `path`."""
    if path is None:
        return
    document = {
        "bench": bench,
        "what": what,
        "machine": machine(),
        "figures": [asdict(figure) for figure in figures],
        "raw": raw,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
