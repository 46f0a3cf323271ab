"""Template quality and speed of summarize_logs' grouping.

    .venv/bin/python bench/bench_patterns.py [--loghub DIR] [--events 100000]

Quality: each system folder of DIR (default: shared/loghub beside the repository, or beside the one it
was cloned from; EVIGATE_LOGHUB names another) holds
`<Name>_2k.log` (raw lines), `<Name>_2k.log_structured.csv` (LineId, ..., EventId: the ground-truth
template of each line). The raw file goes through the same path as summarize_logs: format detection
on a sample (a named format, else an inferred header), header parsing, masking and grouping.
Grouping accuracy (GA): a line is correct when the set of lines in its group is exactly the set of
lines of its ground-truth template. Beside it, drain3's TemplateMiner with default settings, fed the
structured file's Content column (the header already cut off, as loghub's published figures are
measured).

Speed: summarize over --events generated events of mixed statements.

In-sample: the shipped text formats, the masking and the grouping were developed against these 8
systems (`git log -- server/sources/logs/text_patterns.json`), and 8 further loghub systems were used
to check the header inference while it was written; no labelled log set from outside loghub is at
hand, so there is no held-out figure, and the table says so.
"""

from __future__ import annotations

import argparse
import csv
import logging
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drain3 import TemplateMiner
from drain3.template_miner_config import TemplateMinerConfig

from bench import figures
from evigate.server.sources.logs.headers import text_format_for
from evigate.server.sources.logs.patterns import group_messages, pattern_ref_text, summarize
from tests.support.loghub import loghub_folder

DEFAULT_LOGHUB = loghub_folder()
SAMPLE_LINES = 200


def grouping_accuracy(predicted: Sequence[object], truth: Sequence[str]) -> float:
    """Share of lines whose predicted group holds exactly the lines of their true template."""
    by_truth: dict[str, set[int]] = defaultdict(set)
    by_group: dict[object, set[int]] = defaultdict(set)
    for line, (group, event) in enumerate(zip(predicted, truth, strict=True)):
        by_truth[event].add(line)
        by_group[group].add(line)
    correct = sum(len(lines) for lines in by_group.values() if by_truth[truth[next(iter(lines))]] == lines)
    return correct / len(truth) if truth else 0.0


@dataclass
class SystemResult:
    name: str
    lines: int
    parser: str
    parsed: int
    ours: float
    drain_default: float


def messages_from_raw(lines: list[str]) -> tuple[str, list[str], int]:
    """What summarize_logs would mine: each line's message after the detected header."""
    text_format = text_format_for(lines[:SAMPLE_LINES])
    if text_format is None:
        return "none", lines, 0
    messages, parsed = [], 0
    for line in lines:
        parsed_line = text_format.parse(line)
        if parsed_line is None:
            messages.append(line)
        else:
            parsed += 1
            messages.append(parsed_line.message)
    return text_format.name, messages, parsed


def drain3_defaults(contents: list[str]) -> list[int]:
    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    return [miner.add_log_message(content)["cluster_id"] for content in contents]


def run_system(folder: Path) -> SystemResult | None:
    name = folder.name
    raw_path, structured_path = folder / f"{name}_2k.log", folder / f"{name}_2k.log_structured.csv"
    if not raw_path.exists() or not structured_path.exists():
        return None
    lines = raw_path.read_text(encoding="utf-8", errors="replace").splitlines()
    with structured_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    truth = [row["EventId"] for row in rows]
    if len(lines) != len(truth):
        raise SystemExit(f"{name}: {len(lines)} raw lines but {len(truth)} structured rows")
    parser, messages, parsed = messages_from_raw(lines)
    ours = grouping_accuracy(group_messages(messages).group_of, truth)
    theirs = grouping_accuracy(drain3_defaults([row["Content"] for row in rows]), truth)
    return SystemResult(name, len(lines), parser, parsed, ours, theirs)


@dataclass(frozen=True)
class _Event:
    timestamp: datetime
    level: str
    message: str


def generated_events(count: int, seed: int = 7) -> list[_Event]:
    """Events from 60 statements with ids, numbers, hosts, paths and durations in them."""
    rng = random.Random(seed)
    verbs = ["Connection", "Request", "Job", "Session", "Lease", "Upload", "Query", "Handshake"]
    outcomes = ["timed out after", "completed in", "retried after", "was rejected after"]
    statements = [(rng.choice(verbs), rng.choice(outcomes), n) for n in range(60)]
    start = datetime(2026, 1, 2, 9, 0, tzinfo=UTC)
    events = []
    for i in range(count):
        verb, outcome, n = statements[min(int(rng.expovariate(0.15)), 59)]
        message = (
            f"{verb} {n} to host-{rng.randint(1, 40)}.internal:{rng.randint(1024, 65535)} "
            f"for /api/v{n % 3}/items/{rng.randint(1, 10**6)} {outcome} {rng.randint(1, 5000)}ms "
            f"id={rng.getrandbits(64):016x}"
        )
        level = "ERROR" if "rejected" in outcome else "INFO"
        events.append(_Event(start + timedelta(milliseconds=36 * i), level, message))
    return events


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loghub", type=Path, default=DEFAULT_LOGHUB, help="folder of <Name>/<Name>_2k.log*")
    parser.add_argument("--events", type=int, default=100_000, help="events for the speed check")
    figures.add_json_flag(parser)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)  # drain3's TemplateMiner logs its configuration

    folder = args.loghub.resolve()
    if not folder.is_dir():
        raise SystemExit(f"no loghub folder at {folder} (pass --loghub DIR)")
    results = [r for d in sorted(folder.iterdir()) if d.is_dir() and (r := run_system(d))]
    if not results:
        raise SystemExit(f"no <Name>/<Name>_2k.log with a structured CSV under {args.loghub}")
    print(f"{'system':<12} {'lines':>6} {'parser':<22} {'parsed':>7} {'GA evigate':>11} {'GA drain3':>10}")
    for r in results:
        print(
            f"{r.name:<12} {r.lines:>6} {r.parser:<22} {r.parsed:>7} {r.ours:>11.3f} {r.drain_default:>10.3f}"
        )

    events = generated_events(args.events)
    began, began_cpu = time.perf_counter(), time.process_time()
    patterns = summarize(events)
    elapsed, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    print(
        f"\nsummarize over {len(events):,} events: {elapsed:.2f} s ({cpu:.2f} s CPU), "
        f"{len(patterns)} patterns; top one:"
    )
    print(f"  {pattern_ref_text(patterns[0])}")

    ours = sum(r.ours for r in results) / len(results)
    theirs = sum(r.drain_default for r in results) / len(results)
    print(f"\nmean GA {ours:.3f} over {len(results)} systems (evigate) vs {theirs:.3f} (drain3 defaults)")
    systems = ", ".join(r.name for r in results)
    found = [
        figures.Figure(
            f"mean grouping accuracy over {len(results)} loghub systems ({systems}), evigate / drain3",
            f"{ours:.3f} / {theirs:.3f}",
            sample="in-sample",
        ),
        *(
            figures.Figure(
                f"{r.name} GA, evigate / drain3", f"{r.ours:.3f} / {r.drain_default:.3f}", "in-sample"
            )
            for r in results
        ),
        figures.Figure(
            f"summarize over {len(events):,} generated events", f"{elapsed:.2f} s ({cpu:.2f} s CPU)"
        ),
    ]
    what = "template grouping accuracy on loghub-2k (raw lines through the reader) beside drain3 defaults"
    figures.write(args.json, "bench_patterns", what, found, [r.__dict__ for r in results])


if __name__ == "__main__":
    main()
