"""A small world, osprey (tests/worlds/osprey/README.md), through the real pipeline with the offline
agents on its files: subjects named by namespace, pod, workload kind or plain words, windows given
as clock times, dependencies the evidence names.

Its questions were committed before the service learnt any of this and stay as they were: the
floors below are what the service scores on them, and rise as it gets better. The rules that hold
everywhere hold here too.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from evigate.storage import Database
from tests.worlds.judge import DATA_DIRS, failures, questions, run_world, table

WORLD = "osprey"
QUESTIONS_SHA256 = "15261d94ddd9b8791714414129d0ab5ec770f4ee4c337dbb604856bb07a28af2"
# Correct answers per family: 8 of 22 when the questions were written; these are the figures once
# the service read times of day as windows, followed a dependency the evidence names, took a pod or
# a workload kind for its workload and a namespace for one (bench/bench_worlds.py --world osprey: 20
# of 22), and once a service's rare severe events below the asked level answered "any errors?" (an
# out-of-memory failure Redis logs as a warning: 22 of 22).
FLOORS = {"namespace": 4, "workload": 4, "plain_names": 4, "clock_time": 6, "dependency": 4}
OVERALL_FLOOR = 22


def test_the_questions_are_the_ones_written_first() -> None:
    path = DATA_DIRS[WORLD] / "questions.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == QUESTIONS_SHA256, (
        "osprey's questions were written before the service learnt this world and stay unchanged"
    )


def test_the_questions_cover_every_family_in_both_languages() -> None:
    labelled = questions(WORLD)
    assert len({q.id for q in labelled}) == len(labelled)
    assert {q.family for q in labelled} == set(FLOORS)
    for family in FLOORS:
        assert {q.language for q in labelled if q.family == family} == {"en", "zh"}, family


async def test_osprey_through_the_pipeline(tmp_path: Path) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'osprey.db'}", pool_size=5)
    try:
        judgements = await run_world(WORLD, db)
    finally:
        await db.close()
    report = f"{table(WORLD, judgements)}\n{failures(judgements)}"
    assert not [(j.question.id, j.unsupported) for j in judgements if j.unsupported], report
    assert not [j.question.id for j in judgements if j.overstated], report
    assert not [j.question.id for j in judgements if j.unchecked_as_nothing], report
    right = Counter(j.question.family for j in judgements if j.correct)
    low = {f: f"{right[f]} < {floor}" for f, floor in FLOORS.items() if right[f] < floor}
    assert not low, f"{low}\n{report}"
    assert sum(right.values()) >= OVERALL_FLOOR, report
