"""The third world, kestrel (tests/worlds/kestrel/README.md), through the real pipeline: offline
agents, the default knowledge search, its log files, and its metrics and alerts served by a real
VictoriaMetrics and Alertmanager (tests/worlds/live.py), read at the world's reference time.

Its questions were committed before the service learnt anything of this world and stay as they
were: the floors below are what the service scored on them when they were written, and rise as the
service gets better. The rules that hold everywhere hold here too, for every question but the known
violations listed (each with what was said), which must be removed once fixed.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from evigate.storage import Database
from tests.support.waiting import SLACK
from tests.worlds.judge import DATA_DIRS, FAMILIES, Judgement, by_class, failures, questions, run_world, table
from tests.worlds.live import LiveSources, start_live_sources

WORLD = "kestrel"
# The questions as committed before any change for this world; a new question is a new file.
QUESTIONS_SHA256 = "9a48b7cddc4765ed408a549ff5e5c2521432891d7541fea82929d0a628a8f7f0"
FAMILIES_OF_KESTREL = (
    *FAMILIES,
    "naming",
    "namespace",
    "search_terms",
    "evidence_facts",
    "summaries",
    "time_levels",
    "identity_sources",
    "metrics",
    "change",
    "dependency",
)
# Correct answers per family: 21 of 101 when the questions were written; these are the figures
# measured after the service learnt to resolve names, discover metrics, widen windows and pick the
# runbook section a question asks for (bench/bench_worlds.py --world kestrel: 52 of 101), and once it
# read times of day as windows, followed a dependency the evidence names and took a namespace for
# one (65 of 101), and once request words, dates and namespaces were no search terms, list intents
# got every template and a kind of line was searched as that kind (74 of 101), and once a template's
# ref held its example's cause and named the service it was asked for (80 of 101), and once "since
# when?" and "what changed?" read the logs' history and the signals' change points (85 of 101); a day
# ("today", "早上") as a window, a paraphrased alert of a named service as its own and a name no
# source knows before "have" asked of the catalog gave 86 of 101 on their own, 89 with both; once a
# long cause chain kept its root cause and an error field its quoted part, and a state or time
# question ("is it slow?", "when did it run out of heap?") kept its alert and log checks beside the
# signal its words name (95 of 101), and a crash was looked for as the process's last words (96).
FLOORS = {
    "known_alert": 6,
    "unknown_service": 4,
    "resolved_alert": 6,
    "paraphrase": 6,
    "compound": 3,
    "runbook_steps": 8,
    "survey": 6,
    "out_of_scope": 4,
    "naming": 6,
    "namespace": 3,
    "search_terms": 7,
    "evidence_facts": 6,
    "summaries": 6,
    "time_levels": 5,
    "identity_sources": 6,
    "metrics": 6,
    "change": 4,
    "dependency": 4,
}
OVERALL_FLOOR = 96
# "Could not check" said as "nothing found": none left (the logs of RiskScorer, which has none
# anywhere, were taken for an alert's; RiskScorer is now the service the catalog knows).
KNOWN_UNCHECKED_AS_NOTHING: set[str] = set()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSources]:
    sources = start_live_sources(DATA_DIRS[WORLD], tmp_path_factory.mktemp("kestrel-servers"))
    yield sources
    sources.stop()


def test_the_questions_are_the_ones_written_first() -> None:
    path = DATA_DIRS[WORLD] / "questions.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == QUESTIONS_SHA256, (
        "kestrel's questions were written before the service learnt this world and stay unchanged"
    )


def test_the_questions_cover_every_family_in_both_languages_and_say_how_to_judge_them() -> None:
    labelled = questions(WORLD)
    assert len(labelled) >= 60 and len({q.id for q in labelled}) == len(labelled)
    assert {q.family for q in labelled} == set(FAMILIES_OF_KESTREL) == set(FLOORS)
    for family in FAMILIES_OF_KESTREL:
        assert {q.language for q in labelled if q.family == family} == {"en", "zh"}, family
    languages = Counter(q.language for q in labelled)
    assert abs(languages["en"] - languages["zh"]) <= 0.1 * len(labelled), languages
    for q in labelled:
        assert q.must or q.must_not or q.expect, f"{q.id}: nothing to judge it by"
        assert q.classes, f"{q.id}: says no way of asking"


# 101 questions through the pipeline: about 140 s at a load average of 15, so the suite's 300 s hang
# guard is stretched like every other bound (tests/support/waiting.py).
@pytest.mark.timeout(300 * SLACK)
async def test_kestrel_through_the_pipeline_on_live_sources(live: LiveSources, tmp_path: Path) -> None:
    db = await Database.open(f"sqlite+aiosqlite:///{tmp_path / 'kestrel.db'}", pool_size=5)
    try:
        judgements = await run_world(WORLD, db, live, tmp_path)
    finally:
        await db.close()
    report = f"{table(WORLD, judgements)}\n{by_class(judgements)}\n{failures(judgements)}"
    _hard_rules(judgements, report)
    asked = Counter(j.question.family for j in judgements)
    right = Counter(j.question.family for j in judgements if j.correct)
    assert set(asked) == set(FLOORS)
    low = {f: f"{right[f]}/{asked[f]} < {floor}" for f, floor in FLOORS.items() if right[f] < floor}
    assert not low, f"{low}\n{report}"
    assert sum(right.values()) >= OVERALL_FLOOR, report


def _hard_rules(judgements: list[Judgement], report: str) -> None:
    assert not [(j.question.id, j.unsupported) for j in judgements if j.unsupported], report
    # the offline composer passes the answer check by construction: every answer is its own
    assert not [(j.question.id, j.refused) for j in judgements if j.refused], report
    assert not [j.question.id for j in judgements if j.overstated], report
    unchecked = {j.question.id for j in judgements if j.unchecked_as_nothing}
    new = unchecked - KNOWN_UNCHECKED_AS_NOTHING
    assert not new, f"{sorted(new)}\n{report}"
    fixed = KNOWN_UNCHECKED_AS_NOTHING - unchecked
    assert not fixed, f"{sorted(fixed)} no longer say could-not-check as nothing: take them off the list"
