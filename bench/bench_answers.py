"""What the answers of each world look like to a reader, and what checking them costs.

    python bench/bench_answers.py                   # demo, tidewater, then kestrel (live sources)
    python bench/bench_answers.py --world demo      # one world
    python bench/bench_answers.py --show            # and every answer as the user reads it

Every labelled question of a world (tests/worlds/<world>/questions.json) is asked through the
offline pipeline on its data, as bench_worlds does. Per world it prints:

- sentences and characters per answer (mean, max): fixed lines composed by code count as sentences;
  and the prose per answer (max): headline, findings, absences and hypotheses, the lists (steps,
  what could not be checked) and fixed lines aside, which the Composer keeps to about eight unless
  the question asks for a list;
- the share of sentences bound to a claim or hypothesis, fixed lines aside (must be 100%);
- internal tokens found in the text the user reads (`template=`, `levels=`, `bm25=`, `dense=`,
  `threshold=`, `match=L0`, `source=`, `$.alerts[0]`; must be 0);
- language mismatches: answers whose language (by script, quotes aside: rules.language) is not the
  question's (must be 0);
- the direct answer in the first line: the first sentence after a verdict note is a headline, an
  absence, a could-not-check line or "nothing could be confirmed";
- the sentence check's cost per answer (CPU, p50 / p99; target p50 under 5 ms), on the session's
  own material rebuilt from its trace.

demo and tidewater grew with the code (in-sample); osprey and kestrel were written questions-first
and are reported apart.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import figures  # noqa: E402
from evigate.rules import sentence_check  # noqa: E402
from evigate.rules.enums import SentenceKind  # noqa: E402
from evigate.rules.sentence_types import Sentence, SentenceMaterial  # noqa: E402
from evigate.server.pipeline import material  # noqa: E402
from evigate.storage import Database  # noqa: E402
from tests.worlds.judge import (  # noqa: E402
    DATA_DIRS,
    INTERNAL,
    LIVE_WORLDS,
    Judgement,
    answer_language,
    direct_first,
    run_world,
)
from tests.worlds.live import start_live_sources  # noqa: E402

TARGET_P50_MS = 5.0
_LISTS = frozenset({SentenceKind.STEP, SentenceKind.COULD_NOT_CHECK})


async def _material(db: Database, judgement: Judgement) -> SentenceMaterial | None:
    trace = await db.repo.get_trace(judgement.session_id)
    if trace is None or not trace.rounds:
        return None
    last = trace.rounds[-1]
    q = judgement.question
    composer_input = material.composer_input(
        q.query, q.language, last.executor_output or {}, last.gatekeeper_result or {}, last.verdict or {}
    )
    return material.sentence_material(composer_input, last.gatekeeper_result or {}, trace.invocations)


def _cost_ms(sentences: list[Sentence], found: SentenceMaterial, repeat: int) -> float:
    sentence_check.check(sentences, found)  # the regexes compile once per process
    spent = []
    for _ in range(repeat):
        start = time.process_time()
        sentence_check.check(sentences, found)
        spent.append((time.process_time() - start) * 1000)
    return statistics.median(spent)


async def measure(world: str, db: Database, tmp: Path, repeat: int, show: bool) -> dict[str, Any]:
    if world in LIVE_WORLDS:
        live = start_live_sources(DATA_DIRS[world], tmp / world / "servers")
        try:
            judgements = await run_world(world, db, live, tmp / world)
        finally:
            live.stop()
    else:
        judgements = await run_world(world, db)
    sizes, prose, chars, costs = [], [], [], []
    bound = unbound = internal = mismatched = direct = 0
    for j in judgements:
        sentences = [Sentence.from_seed(s) for s in j.sentences]
        sizes.append(len(sentences))
        prose.append(sum(not s.fixed_line and s.kind not in _LISTS for s in sentences))
        chars.append(len(j.answer))
        for s in sentences:
            if not s.fixed_line:
                bound += bool(s.claim_ids or s.hypothesis_ids)
                unbound += not (s.claim_ids or s.hypothesis_ids)
        internal += len(INTERNAL.findall(j.answer))
        mismatched += answer_language(j.answer, j.question.language) != j.question.language
        direct += direct_first(sentences)
        found = await _material(db, j)
        if found is not None and sentences:
            costs.append(_cost_ms(sentences, found, repeat))
        if show:
            print(f"--- {j.question.id} ({j.question.language}): {j.question.query}\n{j.answer}")
    costs = costs or [0.0]
    ordered = sorted(costs)
    return {
        "world": world,
        "answers": len(judgements),
        "correct": sum(j.correct for j in judgements),
        "sentences_mean": statistics.mean(sizes or [0]),
        "sentences_max": max(sizes or [0]),
        "prose_max": max(prose or [0]),
        "chars_mean": statistics.mean(chars or [0]),
        "chars_max": max(chars or [0]),
        "bound_share": bound / max(1, bound + unbound),
        "internal_tokens": internal,
        "language_mismatches": mismatched,
        "direct_first": direct,
        "check_p50_ms": statistics.median(costs),
        "check_p99_ms": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
    }


def _sample(world: str) -> str:
    """demo and tidewater grew with the code; osprey's and kestrel's questions came first."""
    return "in-sample" if world in ("demo", "tidewater") else "questions-first"


def _print(row: dict[str, Any]) -> None:
    sample = _sample(row["world"])
    print(f"\n{row['world']} ({sample}): {row['answers']} answers, {row['correct']} judged correct")
    print(f"  sentences per answer   mean {row['sentences_mean']:.1f}, max {row['sentences_max']}")
    print(f"  prose per answer       max {row['prose_max']} (steps, could-not-check and fixed lines aside)")
    print(f"  characters per answer  mean {row['chars_mean']:.0f}, max {row['chars_max']}")
    print(f"  sentences bound        {row['bound_share']:.1%}")
    print(f"  internal tokens        {row['internal_tokens']}")
    print(f"  language mismatches    {row['language_mismatches']}")
    print(f"  direct answer first    {row['direct_first']}/{row['answers']}")
    verdict = "meets" if row["check_p50_ms"] < TARGET_P50_MS else "misses"
    print(
        f"  check per answer (CPU) p50 {row['check_p50_ms']:.2f} ms, p99 {row['check_p99_ms']:.2f} ms"
        f" ({verdict} the {TARGET_P50_MS:.0f} ms target)"
    )


async def main(worlds: list[str], repeat: int, show: bool) -> list[dict[str, Any]]:
    logging.disable(logging.WARNING)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = await Database.open(f"sqlite+aiosqlite:///{tmp}/bench.db", pool_size=5)
        try:
            for world in worlds:
                row = await measure(world, db, Path(tmp), repeat, show)
                _print(row)
                rows.append(row)
        finally:
            await db.close()
    return rows


def _figures(rows: list[dict[str, Any]]) -> list[figures.Figure]:
    out = []
    for row in rows:
        sample = _sample(row["world"])
        w = row["world"]
        out.extend([
            figures.Figure(f"{w}: sentences / characters per answer (mean)",
                           f"{row['sentences_mean']:.1f} / {row['chars_mean']:.0f}", sample, "warm"),
            figures.Figure(f"{w}: prose sentences per answer (max)", f"{row['prose_max']}", sample, "warm"),
            figures.Figure(f"{w}: sentences bound", f"{row['bound_share']:.1%}", sample, "warm"),
            figures.Figure(f"{w}: internal tokens / language mismatches",
                           f"{row['internal_tokens']} / {row['language_mismatches']}", sample, "warm"),
            figures.Figure(f"{w}: direct answer in the first line",
                           f"{row['direct_first']}/{row['answers']}", sample, "warm"),
            figures.Figure(f"{w}: sentence check per answer, CPU p50 / p99",
                           f"{row['check_p50_ms']:.2f} / {row['check_p99_ms']:.2f} ms", sample, "warm"),
        ])  # fmt: skip
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--world", choices=sorted(DATA_DIRS), action="append", help="only this world")
    parser.add_argument("--repeat", type=int, default=10, help="checks of each answer (default 10)")
    parser.add_argument("--show", action="store_true", help="print every answer")
    figures.add_json_flag(parser)
    args = parser.parse_args()
    everything = sorted(DATA_DIRS, key=lambda w: (w in LIVE_WORLDS, list(DATA_DIRS).index(w)))
    found = asyncio.run(main(args.world or everything, args.repeat, args.show))
    what = "the offline answers of every labelled question per world: size, binding, tokens, language"
    figures.write(args.json, "bench_answers", what, _figures(found), found)
