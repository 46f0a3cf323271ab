"""A floor on grouping accuracy over real logs: three loghub samples read from their raw files
(format detection, header parsing, masking, grouping), scored against their ground-truth templates.
The full table over every system is bench/bench_patterns.py's."""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest

from evigate.server.sources.logs.patterns import group_messages
from evigate.server.sources.logs.textformats import detect_text_format
from tests.support.loghub import loghub_folder

LOGHUB = loghub_folder()


def grouping_accuracy(groups: list[int], truth: list[str]) -> float:
    by_truth: dict[str, set[int]] = defaultdict(set)
    by_group: dict[int, set[int]] = defaultdict(set)
    for line, (group, event) in enumerate(zip(groups, truth, strict=True)):
        by_truth[event].add(line)
        by_group[group].add(line)
    correct = sum(len(lines) for lines in by_group.values() if by_truth[truth[min(lines)]] == lines)
    return correct / len(truth)


@pytest.mark.parametrize(("system", "floor"), [("Apache", 0.99), ("OpenSSH", 0.95), ("Zookeeper", 0.95)])
def test_grouping_accuracy_floor_on_raw_loghub_files(system: str, floor: float) -> None:
    folder = LOGHUB / system
    lines = (folder / f"{system}_2k.log").read_text(encoding="utf-8", errors="replace").splitlines()
    with (folder / f"{system}_2k.log_structured.csv").open(encoding="utf-8", newline="") as handle:
        truth = [row["EventId"] for row in csv.DictReader(handle)]
    text_format = detect_text_format(lines[:200])
    assert text_format is not None
    parsed = [text_format.parse(line) for line in lines]
    assert all(p is not None for p in parsed)
    messages = [p.message for p in parsed if p is not None]
    assert grouping_accuracy(group_messages(messages).group_of, truth) >= floor
