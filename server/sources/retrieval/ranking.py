"""Hybrid ranking, pure: block scores in, ranked documents and a match level out.

Scores are aggregated per document (its best block). Order comes from reciprocal-rank fusion of
the BM25 ranking and the dense ranking (RRF needs no common scale between the two). The match level
is a separate decision, since a fused rank says nothing about whether the best document is relevant
at all:
- L0: a key term of a document occurs in the query as a whole token (as lookup_knowledge does);
- L1: a document's evidence clears its threshold, calibrated on the labelled set
  (bench/eval_retrieval.py). Evidence is the document's cosine minus the query's background (the
  median cosine of the documents in its language: how close an unrelated document comes for this
  query, which varies a lot from query to query with a small encoder) plus a small saturated BM25
  bonus. The threshold is `l1_threshold` when query and document are in the same language and
  `l1_cross_threshold` when they are not: a small multilingual encoder compresses cross-language
  similarities (a Chinese question and the English runbook that answers it score about half what a
  same-language pair does, and so do unrelated pairs), so one threshold either drops most
  cross-language answers or lets same-language noise through;
- none otherwise.
What is returned is then cut by rank and margin: the best document's runner-ups are returned only
while they stay within `margin` spreads of it, the spread being the standard deviation of the
query's own scores over the corpus (every document, and the generic background sentences when the
corpus is small: snapshot.py). A runner-up the best document beats by more is another topic that
merely reads a little like the question, not a second answer. The margin is in units of the query's
own score distribution, so it needs no calibration on a corpus: one spread.
Without dense scores (embedder down, or a document not embedded yet) the lexical rule of
lookup_knowledge decides: its BM25 score must reach `lexical_threshold` with at least two distinct
query terms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from .lexical import LexicalScores

MatchLevel = Literal["L0", "L1", "none"]
Mode = Literal["hybrid", "dense", "bm25"]

# Calibrated with bench/eval_retrieval.py on the calibration half of tests/golden/retrieval: the
# lowest thresholds whose false-L1 rate on must-be-none queries stays at or under 5%, one over the
# same-language candidates, one over the cross-language ones.
DEFAULT_L1_THRESHOLD = 0.145
DEFAULT_L1_CROSS_THRESHOLD = 0.087
CROSS_LANGUAGE_GAP = 0.5  # |Chinese share of the query - of the document| from which a pair is cross
DEFAULT_LEXICAL_WEIGHT = 0.10


@dataclass(frozen=True)
class RankingConfig:
    mode: Mode = "hybrid"
    l1_threshold: float = DEFAULT_L1_THRESHOLD
    l1_cross_threshold: float = DEFAULT_L1_CROSS_THRESHOLD
    lexical_weight: float = DEFAULT_LEXICAL_WEIGHT  # evidence bonus of a strong BM25 match
    lexical_half: float = 5.0  # the BM25 score that earns half the bonus
    rrf_k: int = 60
    lexical_threshold: float = 3.0  # the BM25-only rule, as lookup_knowledge
    lexical_min_terms: int = 2
    margin: float = 1.0  # in spreads of the query's scores: how far behind the best a runner-up may be


@dataclass(frozen=True)
class DenseScores:
    blocks: npt.NDArray[np.float32]  # cosine per block, NaN where a block has no vector
    docs: npt.NDArray[np.float32]  # per document, NaN where it has none (see index.py)
    background: npt.NDArray[np.float32]  # per document: what an unrelated one scores for this query
    language_gap: npt.NDArray[np.float32] | None = None  # per document: |Chinese share - query's|
    spread: float | None = None  # std of the query's scores over the corpus (None: over the documents)


@dataclass(frozen=True)
class Hit:
    doc: int  # document number (caller's numbering)
    block: int  # its best block
    bm25: float
    dense: float | None
    evidence: float  # what the L1 decision compared with the threshold
    fused: float
    bm25_rank: int | None  # 1-based; None when the document shares no term with the query
    dense_rank: int | None
    fused_rank: int
    matched: tuple[str, ...] = ()  # key terms found in the query (L0)
    threshold: float | None = None  # the L1 threshold this document's evidence is held to
    cross_language: bool = False


@dataclass(frozen=True)
class Margin:
    """How the best document stands against the others, in spreads of the query's own scores."""

    spread: float  # std of the query's scores over the corpus
    margin: float  # the configured margin, in spreads
    lead: float | None  # how far the best is ahead of the runner-up, in spreads (None: no runner-up)
    dropped: tuple[tuple[int, float], ...] = ()  # (document, spreads behind the best) cut by it

    def details(self, source_of: Callable[[int], str]) -> dict[str, object]:
        return {
            "spread": round(self.spread, 4),
            "margin": self.margin,
            "lead": None if self.lead is None else round(self.lead, 2),
            "dropped": [{"source": source_of(d), "behind": round(b, 2)} for d, b in self.dropped],
        }


@dataclass(frozen=True)
class Ranking:
    level: MatchLevel
    hits: list[Hit]  # what the lookup returns (empty for none)
    candidates: list[Hit]  # the best few whatever the level, for diagnostics and evaluation
    margin: Margin | None = None  # None for L0 and when the corpus gives no spread


def key_pattern(key: str) -> re.Pattern[str]:
    """A key term as a whole token of a lowercased query (CJK keys: as a substring)."""
    escaped = re.escape(key.lower())
    return re.compile(escaped if not key.isascii() else rf"(?<![a-z0-9_]){escaped}(?![a-z0-9_])")


def _ranks(values: npt.NDArray[np.float64], eligible: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """1-based descending ranks of eligible entries, 0 for the others."""
    order = np.argsort(-values, kind="stable")
    order = order[eligible[order]]
    ranks = np.zeros(len(values), dtype=np.int64)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def rank(
    doc_of_block: npt.NDArray[np.int64],
    n_docs: int,
    lexical: LexicalScores,
    dense: DenseScores | None,
    *,
    key_hits: dict[int, tuple[str, ...]],
    config: RankingConfig,
    limit: int,
    depth: int = 10,
) -> Ranking:
    """`dense`: None when the query has no vector (embedder down) or the mode is bm25."""
    if n_docs == 0:
        return Ranking("none", [], [])
    if config.mode == "bm25":
        dense = None
    doc_bm25 = np.zeros(n_docs, dtype=np.float64)
    np.maximum.at(doc_bm25, doc_of_block, lexical.scores)
    doc_terms = np.zeros(n_docs, dtype=np.int64)
    np.maximum.at(doc_terms, doc_of_block, lexical.terms)
    bm25_ranks = _ranks(doc_bm25, doc_bm25 > 0)
    use_lexical = config.mode != "dense" or dense is None
    fused = (
        np.where(bm25_ranks > 0, 1.0 / (config.rrf_k + bm25_ranks), 0.0) if use_lexical else np.zeros(n_docs)
    )
    doc_dense = np.full(n_docs, np.nan)
    dense_ranks = np.zeros(n_docs, dtype=np.int64)
    if dense is not None:
        doc_dense = dense.docs.astype(np.float64)
        has = ~np.isnan(doc_dense)
        dense_ranks = _ranks(np.nan_to_num(doc_dense, nan=-2.0), has)
        fused = fused + np.where(dense_ranks > 0, 1.0 / (config.rrf_k + dense_ranks), 0.0)
        block_scores = np.nan_to_num(dense.blocks.astype(np.float64), nan=-2.0)
        bonus = (
            config.lexical_weight * doc_bm25 / (doc_bm25 + config.lexical_half)
            if config.mode == "hybrid"
            else 0.0
        )
        evidence = np.nan_to_num(doc_dense - dense.background, nan=-1.0) + bonus
        gap = dense.language_gap if dense.language_gap is not None else np.zeros(n_docs)
        cross = gap >= CROSS_LANGUAGE_GAP
    else:
        block_scores = lexical.scores
        evidence = doc_bm25
        cross = np.zeros(n_docs, dtype=bool)
    order = np.lexsort((np.arange(n_docs), -evidence, -fused))
    fused_ranks = np.empty(n_docs, dtype=np.int64)
    fused_ranks[order] = np.arange(1, n_docs + 1)

    def hit(d: int) -> Hit:
        return Hit(
            doc=d,
            block=_best_block(doc_of_block, block_scores, d),
            bm25=float(doc_bm25[d]),
            dense=None if np.isnan(doc_dense[d]) else float(doc_dense[d]),
            evidence=float(evidence[d]),
            fused=float(fused[d]),
            bm25_rank=int(bm25_ranks[d]) or None,
            dense_rank=int(dense_ranks[d]) or None,
            fused_rank=int(fused_ranks[d]),
            matched=key_hits.get(d, ()),
            threshold=None
            if dense is None or np.isnan(doc_dense[d])
            else config.l1_cross_threshold
            if cross[d]
            else config.l1_threshold,
            cross_language=bool(cross[d]),
        )

    candidates = [hit(int(d)) for d in order[: max(depth, limit)]]
    if key_hits:
        keyed = sorted(key_hits, key=lambda d: (-len(key_hits[d]), fused_ranks[d]))
        return Ranking("L0", [hit(d) for d in keyed[:limit]], candidates)
    needed = max(min(config.lexical_min_terms, lexical.query_terms), 1)

    def passes(h: Hit) -> bool:
        if h.threshold is not None:
            return h.evidence >= h.threshold
        # No vector for this document (its embedding failed): the lexical rule decides.
        return h.bm25 >= config.lexical_threshold and bool(doc_terms[h.doc] >= needed)

    chosen = [h for h in candidates if passes(h)]
    spread = dense.spread if dense is not None and dense.spread is not None else _spread(evidence)
    margin = _margin(candidates, chosen, spread, config.margin)
    if not chosen:
        return Ranking("none", [], candidates, margin)
    if margin is not None:
        cut = {d for d, _ in margin.dropped}
        chosen = [h for h in chosen if h.doc not in cut]
    return Ranking("L1", chosen[:limit], candidates, margin)


def _spread(evidence: npt.NDArray[np.floating]) -> float | None:
    """The standard deviation of the documents' scores; None for fewer than three (no spread)."""
    return float(np.std(evidence)) if len(evidence) >= 3 else None


def _margin(candidates: list[Hit], chosen: list[Hit], spread: float | None, margin: float) -> Margin | None:
    """The best candidate's lead over the runner-up, and the chosen runner-ups it beats by more than
    `margin` spreads (those are cut). Each is measured by how far its evidence clears its own
    threshold, so a document in the other language, whose similarities the encoder compresses, is
    compared on the same footing as one in the question's."""
    if spread is None or spread <= 0 or not candidates:
        return None
    best = chosen[0] if chosen else candidates[0]
    others = [h for h in candidates if h.doc != best.doc]
    lead = (_clear(best) - max(_clear(h) for h in others)) / spread if others else None
    behind = [(h.doc, (_clear(best) - _clear(h)) / spread) for h in chosen if h.doc != best.doc]
    return Margin(spread, margin, lead, tuple((d, b) for d, b in behind if b > margin))


def _clear(hit: Hit) -> float:
    """How far a document's evidence clears its threshold (its evidence when it has none)."""
    return hit.evidence - (hit.threshold or 0.0)


def _best_block(doc_of_block: npt.NDArray[np.int64], block_scores: npt.NDArray[np.floating], doc: int) -> int:
    """The highest-scoring block of a document (the first one on ties); asked only for the few
    documents a ranking shows."""
    blocks = np.flatnonzero(doc_of_block == doc)
    return int(blocks[np.argmax(block_scores[blocks])])
