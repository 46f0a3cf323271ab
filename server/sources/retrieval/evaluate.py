"""Evaluation on a labelled set: recall@1, recall@3, false matches, and the L1 threshold calibration.

A query's `expect` lists the documents that answer it (any one counts); an empty list means the
lookup must return none. Recall counts only what the lookup returns (level L0 or L1), since a
document ranked first under a "none" verdict never reaches the session. A false match is a
must-be-none query that got L0 or L1.

Calibration: run each query once with no threshold, keep each candidate's evidence, and choose the
lowest thresholds at which the must-be-none queries of the calibration half produce at most
`max_false` false matches, plus a safety margin; report on the other half. There are two: one for
candidates in the query's language, one for candidates in the other language (ranking.py says why).
The split is by a hash of the query id, so it is stable and independent of the file's order.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .index import RetrievalIndex
from .ranking import MatchLevel, RankingConfig


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    kb: str
    kind: str
    query: str
    expect: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    query: LabelledQuery
    level: MatchLevel
    returned: tuple[str, ...]  # sources, best first
    keyed: bool  # the level came from key terms (no threshold involved)
    candidates: tuple[tuple[str, float, bool], ...]  # (source, evidence, cross-language), fused order


@dataclass(frozen=True)
class Metrics:
    positives: int
    recall_at_1: float
    recall_at_3: float
    nones: int
    false_matches: int

    @property
    def false_rate(self) -> float:
        return self.false_matches / self.nones if self.nones else 0.0


def load_queries(path: Path) -> list[LabelledQuery]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        LabelledQuery(q["id"], q["kb"], q["kind"], q["query"], tuple(q["expect"])) for q in data["queries"]
    ]


def in_calibration_half(query: LabelledQuery) -> bool:
    return hashlib.sha256(query.id.encode()).digest()[0] % 2 == 0


async def run(
    index: RetrievalIndex, queries: Sequence[LabelledQuery], config: RankingConfig
) -> list[Outcome]:
    outcomes = []
    for q in queries:
        result = await index.search(q.query, limit=3, config=config)
        outcomes.append(
            Outcome(
                q,
                result.level,
                tuple(h.block.source for h in result.hits),
                result.level == "L0",
                tuple(
                    (c.block.source, c.scores.evidence, c.scores.cross_language) for c in result.candidates
                ),
            )
        )
    return outcomes


def metrics(outcomes: Sequence[Outcome]) -> Metrics:
    pos = [o for o in outcomes if o.query.expect]
    nones = [o for o in outcomes if not o.query.expect]
    at1 = sum(1 for o in pos if o.returned[:1] and o.returned[0] in o.query.expect)
    at3 = sum(1 for o in pos if set(o.returned[:3]) & set(o.query.expect))
    false = sum(1 for o in nones if o.level != "none")
    return Metrics(
        len(pos), at1 / len(pos) if pos else 0.0, at3 / len(pos) if pos else 0.0, len(nones), false
    )


def calibrate(
    unthresholded: Sequence[Outcome], max_false: float = 0.05, margin: float = 0.01
) -> tuple[float, float]:
    """The lowest same-language and cross-language thresholds keeping false matches on these
    must-be-none queries within `max_false`. The same-language threshold spends the allowance first;
    the cross-language one gets what is left."""
    nones = [o for o in unthresholded if not o.query.expect]
    if not nones:
        return 0.0, 0.0
    keyed_false = sum(1 for o in nones if o.keyed)
    allowed = max(0, math.floor(max_false * len(nones)) - keyed_false)
    unkeyed = [o for o in nones if not o.keyed]

    def best(o: Outcome, cross: bool) -> float:
        return max((e for _, e, x in o.candidates if x == cross), default=-1.0)

    def lowest(tops: list[float], budget: int) -> float:
        # Everything strictly above the (budget+1)-th highest none evidence passes.
        tops = sorted(tops, reverse=True)
        return round((tops[budget] if budget < len(tops) else -1.0) + margin, 4)

    same = lowest([best(o, False) for o in unkeyed], allowed)
    false_same = {id(o) for o in unkeyed if best(o, False) >= same}
    left = allowed - len(false_same)
    cross = lowest([best(o, True) for o in unkeyed if id(o) not in false_same], left)
    return same, cross
