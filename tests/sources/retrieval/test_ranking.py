"""The pure ranking: fusion order, match levels, and the lexical rule when dense scores are missing."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest

from evigate.server.sources.retrieval.lexical import Bm25, LexicalScores
from evigate.server.sources.retrieval.ranking import DenseScores, RankingConfig, key_pattern, rank

# Three documents; document 0 has two blocks.
DOC_OF_BLOCK = np.array([0, 0, 1, 2], dtype=np.int64)


def lexical(scores: list[float], terms: list[int], query_terms: int = 2) -> LexicalScores:
    return LexicalScores(np.array(scores), np.array(terms, dtype=np.int32), query_terms)


def dense(blocks: list[float], docs: list[float], background: float = 0.0) -> DenseScores:
    as32: npt.NDArray[np.float32] = np.array(blocks, dtype=np.float32)
    return DenseScores(
        as32, np.array(docs, dtype=np.float32), np.full(len(docs), background, dtype=np.float32)
    )


NO_WORDS = lexical([0, 0, 0, 0], [0, 0, 0, 0])


def test_dense_evidence_over_the_background_decides_l1() -> None:
    scores = dense([0.1, 0.5, 0.2, 0.3], [0.5, 0.2, 0.3], background=0.25)
    result = rank(DOC_OF_BLOCK, 3, NO_WORDS, scores, key_hits={}, config=RankingConfig(), limit=3)
    assert result.level == "L1"
    assert [h.doc for h in result.hits] == [0]  # 0.5 - 0.25 clears 0.15; 0.3 - 0.25 does not
    top = result.hits[0]
    assert (top.block, top.dense_rank, top.bm25_rank, top.fused_rank) == (1, 1, None, 1)
    assert top.evidence == np.float32(0.5) - 0.25


def test_nothing_over_the_threshold_is_none_with_candidates_kept() -> None:
    scores = dense([0.2, 0.2, 0.21, 0.19], [0.2, 0.21, 0.19], background=0.2)
    result = rank(DOC_OF_BLOCK, 3, NO_WORDS, scores, key_hits={}, config=RankingConfig(), limit=3)
    assert (result.level, result.hits) == ("none", [])
    assert [h.doc for h in result.candidates] == [1, 0, 2]


def test_reciprocal_rank_fusion_orders_by_both_lists() -> None:
    # By words: 0 then 1 (2 shares no word). By meaning: 2, 1, 0.
    words = lexical([9.0, 0, 5.0, 0], [2, 0, 2, 0])
    scores = dense([0.1, 0.1, 0.45, 0.5], [0.1, 0.45, 0.5], background=0.0)
    result = rank(DOC_OF_BLOCK, 3, words, scores, key_hits={}, config=RankingConfig(rrf_k=1), limit=3)
    fused = {h.doc: h.fused for h in result.candidates}
    assert fused == {0: 1 / 2 + 1 / 4, 1: 1 / 3 + 1 / 3, 2: 1 / 2}
    assert [h.doc for h in result.candidates] == [0, 1, 2]
    assert [h.bm25_rank for h in result.candidates] == [1, 2, None]


def test_key_terms_win_over_any_score() -> None:
    scores = dense([0.9, 0.9, 0.1, 0.1], [0.9, 0.1, 0.1])
    result = rank(
        DOC_OF_BLOCK,
        3,
        NO_WORDS,
        scores,
        key_hits={2: ("RabbitMQQueueBacklog",)},
        config=RankingConfig(),
        limit=3,
    )
    assert result.level == "L0"
    assert [(h.doc, h.matched) for h in result.hits] == [(2, ("RabbitMQQueueBacklog",))]


def test_without_dense_scores_the_lexical_rule_decides() -> None:
    config = RankingConfig()
    strong = rank(
        DOC_OF_BLOCK, 3, lexical([0, 4.0, 1.0, 0], [0, 2, 1, 0]), None, key_hits={}, config=config, limit=3
    )
    assert strong.level == "L1" and [h.doc for h in strong.hits] == [0]
    assert strong.hits[0].dense is None and strong.hits[0].block == 1
    one_word = rank(
        DOC_OF_BLOCK, 3, lexical([0, 4.0, 0, 0], [0, 1, 0, 0]), None, key_hits={}, config=config, limit=3
    )
    assert one_word.level == "none"  # one coincidental rare word is not enough


def test_bm25_prefers_the_block_with_more_query_terms() -> None:
    index = Bm25([["mysql", "replication", "lag"], ["redis", "eviction"], ["mysql", "pool"]])
    scores = index.score("MySQL replication lag")
    assert scores.query_terms == 3
    assert list(scores.terms) == [3, 0, 1]
    assert scores.scores[0] > scores.scores[2] > scores.scores[1] == 0


def test_key_patterns_match_whole_tokens_only() -> None:
    assert key_pattern("NotReady").search("k8s 节点状态变成 notready")
    assert not key_pattern("NotReady").search("notreadyness")
    assert key_pattern("主从切换").search("redis 主从切换之后")


def test_a_runner_up_the_best_beats_by_more_than_the_margin_is_not_returned() -> None:
    # All three clear the threshold; the spread of the query's scores is 0.05.
    far = DenseScores(
        np.array([0.1, 0.6, 0.4, 0.38], dtype=np.float32),
        np.array([0.6, 0.4, 0.38], dtype=np.float32),
        np.zeros(3, dtype=np.float32),
        spread=0.05,
    )
    result = rank(DOC_OF_BLOCK, 3, NO_WORDS, far, key_hits={}, config=RankingConfig(), limit=3)
    assert [h.doc for h in result.hits] == [0]  # 4 and 4.4 spreads behind: other topics
    assert result.margin is not None
    assert result.margin.lead == pytest.approx(4.0)
    assert [d for d, _ in result.margin.dropped] == [1, 2]
    # Close together, both answer: each within one spread of the best.
    near = replace(far, docs=np.array([0.6, 0.57, 0.1], dtype=np.float32), spread=0.05)
    result = rank(DOC_OF_BLOCK, 3, NO_WORDS, near, key_hits={}, config=RankingConfig(), limit=3)
    assert [h.doc for h in result.hits] == [0, 1]
    assert result.margin is not None and result.margin.dropped == ()
