"""What a search ranks against: an immutable snapshot of the index, and the dense scores of a query.

Built in a worker thread from copies (index.py), so building it over many blocks never blocks the
event loop. Each document has three kinds of vectors: its blocks (sections), its whole-document view
and its passages (a section cut into sentences of about `PASSAGE_CHARS`, each with its title and
heading). A small multilingual encoder matches a short passage across languages much better than a
whole section, whose vector blurs several statements; the section and the view keep the document's
overall topic. A document's dense score is the mean of (best section + view) / 2 and its best passage
(on the labelled set: cross-language recall@3 0.71 → 0.81, hybrid recall@3 0.83 → 0.89;
bench/eval_retrieval.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from evigate.server.queries.case_structure import ERROR_CODE
from evigate.server.queries.text import tokenize

from .anchors import PAIRS
from .centering import chinese_share
from .documents import Block, document_view, text_hash
from .lexical import Bm25
from .ranking import DenseScores
from .store import Vector

# Below this many embedded documents their median is a poor background estimate: generic sentences
# (the centering anchors, embedded as passages) stand in as extra unrelated documents.
MIN_BACKGROUND_DOCS = 8
BACKGROUND_TEXTS = tuple(t for pair in PAIRS for t in pair)
MIN_LANGUAGE_DOCS = 3
PASSAGE_WEIGHT = 0.5  # the best passage's share of a document's dense score


@dataclass
class Snapshot:
    blocks: list[Block]
    doc_of_block: npt.NDArray[np.int64]
    n_docs: int
    bm25: Bm25
    matrix: npt.NDArray[np.float32]  # (blocks, dimension), zero rows where a vector is missing
    has_vector: npt.NDArray[np.bool_]
    doc_matrix: npt.NDArray[np.float32]  # (documents, dimension): the document views
    doc_has_vector: npt.NDArray[np.bool_]
    passages: npt.NDArray[np.float32]  # (passages, dimension); only those with a vector
    doc_of_passage: npt.NDArray[np.int64]
    background: npt.NDArray[np.float32]  # (anchors, dimension); empty when not embedded
    doc_chinese: npt.NDArray[np.float32]  # per document: its share of Chinese (centering.py)
    keys_by_token: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    # Cases with an error code, as (document, structure): a bare HTTP status is a key only with
    # one of the case's services (case_structure.conditional_keys).
    coded_cases: list[tuple[int, dict[str, str]]] = field(default_factory=list)

    @property
    def doc_zh(self) -> npt.NDArray[np.bool_]:
        """Documents mostly in Chinese."""
        zh: npt.NDArray[np.bool_] = self.doc_chinese >= 0.5
        return zh


def cosines(matrix: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Row-wise dot products. Not `matrix @ vector`: a matrix-vector product goes to multi-threaded
    BLAS, whose spinning threads fight the embedder's for the cores (16 ms instead of 1 ms for
    10,000 x 384 on two shared cores); einsum runs it in this thread."""
    out: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, vector)
    return out


def _matrix(
    vectors: Mapping[str, Vector], hashes: list[str], dim: int
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    matrix = np.zeros((len(hashes), dim), dtype=np.float32)
    has = np.zeros(len(hashes), dtype=bool)
    for i, h in enumerate(hashes):
        vector = vectors.get(h)
        if vector is not None:
            matrix[i] = vector
            has[i] = True
    return matrix, has


def build_snapshot(blocks: list[Block], vectors: Mapping[str, Vector], dim: int) -> Snapshot:
    doc_no: dict[str, int] = {}
    doc_of_block = np.array([doc_no.setdefault(b.source, len(doc_no)) for b in blocks], dtype=np.int64)
    matrix, has_vector = _matrix(vectors, [b.content_hash for b in blocks], dim)
    keys_by_token: dict[str, list[tuple[int, str]]] = {}
    seen: set[tuple[int, str]] = set()
    for b, d in zip(blocks, doc_of_block, strict=True):
        for key in b.keys:
            if (int(d), key) not in seen:
                seen.add((int(d), key))
                # Indexed under one of its tokens: only keys whose token the query has are tried.
                anchor = (tokenize(key) or [""])[0]
                keys_by_token.setdefault(anchor, []).append((int(d), key))
    coded = [(int(d), dict(b.extra)) for b, d in zip(blocks, doc_of_block, strict=True) if _coded(b)]
    by_doc: list[list[Block]] = [[] for _ in doc_no]
    for b, d in zip(blocks, doc_of_block, strict=True):
        by_doc[d].append(b)
    doc_matrix, doc_has_vector = _matrix(vectors, [text_hash(document_view(bs)) for bs in by_doc], dim)
    passage_hashes, passage_docs = [], []
    for b, d in zip(blocks, doc_of_block, strict=True):
        for text in b.passages:
            passage_hashes.append(text_hash(text))
            passage_docs.append(int(d))
    passages, has_passage = _matrix(vectors, passage_hashes, dim)
    background, has_bg = _matrix(vectors, [text_hash(t) for t in BACKGROUND_TEXTS], dim)
    bm25 = Bm25([tokenize(f"{b.title} {b.section} {b.text}") for b in blocks])
    return Snapshot(
        blocks,
        doc_of_block,
        len(doc_no),
        bm25,
        matrix,
        has_vector,
        doc_matrix,
        doc_has_vector,
        passages[has_passage],
        np.array(passage_docs, dtype=np.int64)[has_passage],
        background[has_bg],
        np.array([chinese_share(document_view(bs)) for bs in by_doc], dtype=np.float32),
        keys_by_token,
        coded,
    )


def _coded(block: Block) -> bool:
    return block.kind == "case" and any(name == ERROR_CODE for name, _ in block.extra)


def _per_doc_max(
    values: npt.NDArray[np.float32], doc_of: npt.NDArray[np.int64], n_docs: int
) -> npt.NDArray[np.float32]:
    best = np.full(n_docs, -np.inf, dtype=np.float32)
    np.fmax.at(best, doc_of, values)
    best[np.isinf(best)] = np.nan
    return best


def dense_scores(snap: Snapshot, q_vector: npt.NDArray[np.float32], query: str = "") -> DenseScores:
    """Block cosines, and per document its dense score (module docstring), its background, how far
    its language is from the query's (which L1 threshold applies) and the spread of the query's
    scores (the unit of the ranking's margin, ranking.py)."""
    blocks = np.where(snap.has_vector, cosines(snap.matrix, q_vector), np.nan).astype(np.float32)
    best = _per_doc_max(blocks, snap.doc_of_block, snap.n_docs)
    view = np.where(snap.doc_has_vector, cosines(snap.doc_matrix, q_vector), np.nan)
    docs = np.where(np.isnan(view), best, np.where(np.isnan(best), view, (best + view) / 2))
    if len(snap.passages):
        passage = _per_doc_max(cosines(snap.passages, q_vector), snap.doc_of_passage, snap.n_docs)
        mixed = (1 - PASSAGE_WEIGHT) * docs + PASSAGE_WEIGHT * passage
        docs = np.where(np.isnan(passage), docs, np.where(np.isnan(docs), passage, mixed))
    docs = docs.astype(np.float32)
    known = docs[~np.isnan(docs)]
    if len(known) < MIN_BACKGROUND_DOCS and len(snap.background):
        known = np.concatenate([known, cosines(snap.background, q_vector)])
    background = np.full(snap.n_docs, float(np.median(known)) if len(known) else 0.0, dtype=np.float32)
    # Centering leaves some language bias: a Chinese question is a little closer to every Chinese
    # document. Each language's documents are measured against their own median when there are
    # enough of them (cross-lingual recall@3 0.63 -> 0.75 on the labelled set).
    own_median = np.zeros(snap.n_docs, dtype=bool)
    for group in (snap.doc_zh, ~snap.doc_zh):
        members = group & ~np.isnan(docs)
        if members.sum() >= MIN_LANGUAGE_DOCS:
            background[group] = np.median(docs[members])
            own_median |= group
    # The cross-language threshold was calibrated for documents measured against their own
    # language's median; a document without one (a language with fewer than MIN_LANGUAGE_DOCS
    # documents) is held to the same-language threshold.
    gap = np.abs(snap.doc_chinese - np.float32(chinese_share(query)))
    gap = np.where(own_median, gap, 0.0).astype(np.float32)
    # The query's own score distribution, what a margin is measured in (ranking.py): the same field
    # as the background, so a small corpus is spread by the generic sentences too.
    spread = float(np.std(known)) if len(known) >= 3 else None
    return DenseScores(blocks, docs, background, gap, spread)
