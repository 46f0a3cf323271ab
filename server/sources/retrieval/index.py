"""The retrieval index: blocks in named groups, their vectors, and a hybrid search that degrades.

Groups ("files", "cases") are replaced or extended independently, so a changed Markdown file or a
new case touches only its own blocks. A block is embedded only when no vector for its content hash
is in memory or in the `VectorStore`: a restart over unchanged files embeds nothing. When the
embedder fails, blocks stay without vectors (retried on the next search), and searches rank by BM25
alone and say why in `RetrievalResult.degraded`; nothing here raises to the session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evigate.server.queries.case_structure import conditional_keys
from evigate.server.queries.text import tokenize

from .documents import Block, document_view, text_hash
from .embedder import Embedder, EmbeddingError
from .ranking import DenseScores, Hit, MatchLevel, RankingConfig, key_pattern, rank
from .snapshot import BACKGROUND_TEXTS, MIN_BACKGROUND_DOCS, Snapshot, build_snapshot, dense_scores
from .store import Vector, VectorStore, VectorStoreError

log = logging.getLogger(__name__)

EMBED_CHUNK = 256
MAX_ITEM_CHARS = 600  # as lookup_knowledge: a ref's text stays one readable line


@dataclass(frozen=True)
class SyncReport:
    blocks: int  # in the group after the update
    embedded: int  # vectors computed now
    from_store: int  # vectors found in the store
    pending: int  # blocks left without a vector (embedder failed)
    error: str | None = None


@dataclass(frozen=True)
class ScoredBlock:
    block: Block
    scores: Hit

    def item(self, level: MatchLevel) -> dict[str, str]:
        """The block as a lookup_knowledge result item (the evidence ref's fields), with the match
        level and scores in a `match` field so the ref text shows them."""
        b, s = self.block, self.scores
        text = b.text if len(b.text) <= MAX_ITEM_CHARS else b.text[: MAX_ITEM_CHARS - 1] + "…"
        item = {"source": b.source, "kind": b.kind, "title": b.title}
        if b.section:
            item["section"] = b.section
        item.update(dict(b.extra))
        item["text"] = text
        if s.matched:
            item["matched"] = ", ".join(s.matched)
        dense = "-" if s.dense is None else f"{s.dense:.3f}"
        item["match"] = f"{level} dense={dense} bm25={s.bm25:.2f} evidence={s.evidence:.3f}"
        if s.threshold is not None:
            cross = " (cross-language)" if s.cross_language else ""
            item["match"] += f" threshold={s.threshold:.3f}{cross}"
        return item

    def details(self) -> dict[str, object]:
        """The scores as `retrieval_details` shows them."""
        s = self.scores
        return {
            "source": self.block.source,
            "section": self.block.section,
            "bm25": round(s.bm25, 4),
            "dense": None if s.dense is None else round(s.dense, 4),
            "evidence": round(s.evidence, 4),
            "fused": round(s.fused, 6),
            "bm25_rank": s.bm25_rank,
            "dense_rank": s.dense_rank,
            "fused_rank": s.fused_rank,
            "threshold": s.threshold,
            "cross_language": s.cross_language,
            **({"matched": ", ".join(s.matched)} if s.matched else {}),
        }


@dataclass(frozen=True)
class RetrievalResult:
    level: MatchLevel
    hits: list[ScoredBlock]  # empty when level is "none"
    candidates: list[ScoredBlock]  # the best few whatever the level
    model_id: str | None  # the vector space used; None when ranked by BM25 alone
    degraded: str | None = None  # why dense scores are missing or partial
    margin: dict[str, object] | None = None  # the best's lead and the runner-ups cut (ranking.Margin)

    def details(self) -> dict[str, object]:
        return {
            "match_level": self.level,
            "retrieval": "hybrid" if self.model_id else "bm25",
            "model": self.model_id,
            "degraded": self.degraded,
            "scores": [h.details() for h in self.hits or self.candidates[:3]],
            "margin": self.margin,
        }


class RetrievalIndex:
    def __init__(
        self,
        embedder: Embedder | None,
        store: VectorStore,
        config: RankingConfig | None = None,
        *,
        group_stores: Mapping[str, VectorStore] | None = None,
        retry_after_s: float = 0.0,
    ) -> None:
        """`group_stores`: a group whose vectors live elsewhere than `store` (the case library's in
        the service database, the files' in a cache file). `retry_after_s`: after a failed query
        embedding, searches rank by BM25 without asking the embedder for this long, so an endpoint
        that hangs costs one timeout per period, not one per lookup."""
        self.embedder = embedder
        self.config = config or RankingConfig()
        self._store = store
        self._group_stores = dict(group_stores or {})
        self._groups: dict[str, dict[str, Block]] = {}
        self._vectors: dict[str, Vector] = {}  # content hash → vector of the current model
        self._snapshot: Snapshot | None = None
        self._generation = 0  # bumped on every change: a snapshot built before one is not kept
        self._lock = asyncio.Lock()
        self.embed_calls = 0  # passage batches embedded by this index (a restart should add none)
        self._retry_after_s = retry_after_s
        self._down: tuple[float, str] | None = None  # (monotonic time to ask again, last error)

    async def replace(self, group: str, blocks: Sequence[Block]) -> SyncReport:
        """The group now holds exactly `blocks` (a re-read knowledge directory)."""
        async with self._lock:
            self._groups[group] = {b.id: b for b in blocks}
            return await self._embed_missing(group)

    async def upsert(self, group: str, blocks: Sequence[Block]) -> SyncReport:
        """Add or replace `blocks` in the group (a new or edited case)."""
        async with self._lock:
            self._groups.setdefault(group, {}).update({b.id: b for b in blocks})
            return await self._embed_missing(group)

    def _texts(self, group: str) -> dict[str, str]:
        """Content hash → text of everything the group needs embedded: blocks and document views."""
        by_source: dict[str, list[Block]] = {}
        for b in self._groups[group].values():
            by_source.setdefault(b.source, []).append(b)
        texts = {b.content_hash: b.embed_text for b in self._groups[group].values()}
        texts.update({text_hash(p): p for b in self._groups[group].values() for p in b.passages})
        for blocks in by_source.values():
            view = document_view(blocks)
            texts[text_hash(view)] = view
        if len({b.source for g in self._groups.values() for b in g.values()}) < MIN_BACKGROUND_DOCS:
            texts.update({text_hash(t): t for t in BACKGROUND_TEXTS})  # 80 short texts, embedded once
        return texts

    async def _embed_missing(self, group: str) -> SyncReport:
        self._changed()
        store = self._group_stores.get(group, self._store)
        texts = self._texts(group)
        live = {h for g in self._groups for h in self._texts(g)}
        self._vectors = {h: v for h, v in self._vectors.items() if h in live}  # drop vectors of old text
        n_blocks = len(self._groups[group])
        if self.embedder is None:
            return SyncReport(n_blocks, 0, 0, n_blocks, "no embedder configured")
        missing = [h for h in texts if h not in self._vectors]
        model = self.embedder.model_id
        dim = self.embedder.dimension
        try:
            stored = await store.get(model, missing)
        except VectorStoreError as exc:
            log.warning("retrieval: %s; embedding without the cache", exc)
            stored = {}
        found = {h: v for h, v in stored.items() if v.shape == (dim,)}
        self._vectors.update(found)
        todo = [h for h in missing if h not in found]
        error, embedded = None, 0
        # In chunks, each stored at once: a build interrupted by a crash or an outage resumes
        # where it stopped instead of starting over.
        for start in range(0, len(todo), EMBED_CHUNK):
            chunk = todo[start : start + EMBED_CHUNK]
            try:
                vectors = await self.embedder.embed([texts[h] for h in chunk], "passage")
            except EmbeddingError as exc:
                error = str(exc)
                log.warning(
                    "retrieval: %d texts of %s left without vectors: %s", len(todo) - embedded, group, exc
                )
                break
            self.embed_calls += 1
            fresh = dict(zip(chunk, vectors, strict=True))
            self._vectors.update(fresh)
            embedded += len(chunk)
            try:
                await store.put(model, fresh)
            except VectorStoreError as exc:  # the vectors still serve this process
                log.warning("retrieval: %s", exc)
        self._changed()  # a search during the embedding built one without these vectors
        pending = sum(1 for b in self._groups[group].values() if b.content_hash not in self._vectors)
        return SyncReport(n_blocks, embedded, len(found), pending, error)

    def _changed(self) -> None:
        self._snapshot = None
        self._generation += 1

    async def _current(self) -> Snapshot:
        """The snapshot of the blocks as they are now. Building one (BM25 postings, matrices) takes
        long over many blocks, so it runs in a worker thread on copies, and is kept only if nothing
        changed meanwhile."""
        while self._snapshot is None:
            generation = self._generation
            blocks = [b for g in self._groups.values() for b in g.values()]
            vectors = dict(self._vectors)
            dim = self.embedder.dimension if self.embedder else 0
            snap = await asyncio.to_thread(build_snapshot, blocks, vectors, dim)
            if generation == self._generation:
                self._snapshot = snap
            else:
                return snap  # already outdated, but built from a consistent copy
        return self._snapshot

    def _key_hits(self, snap: Snapshot, query: str) -> dict[int, tuple[str, ...]]:
        lowered = query.lower()
        hits: dict[int, list[str]] = {}
        for token in ["", *set(tokenize(query))]:
            for doc, key in snap.keys_by_token.get(token, ()):
                if key not in hits.get(doc, []) and key_pattern(key).search(lowered):
                    hits.setdefault(doc, []).append(key)
        for doc, extra in snap.coded_cases:
            for key in conditional_keys(query, extra):
                if key not in hits.get(doc, []):
                    hits.setdefault(doc, []).append(key)
        return {d: tuple(k) for d, k in hits.items()}

    async def _retry_pending(self) -> None:
        async with self._lock:
            for group, blocks in self._groups.items():
                if any(b.content_hash not in self._vectors for b in blocks.values()):
                    await self._embed_missing(group)

    async def search(
        self, query: str, limit: int = 3, config: RankingConfig | None = None
    ) -> RetrievalResult:
        """`config` overrides the index's ranking for this search (evaluation compares modes)."""
        config = config or self.config
        degraded: str | None = None
        q_vector: npt.NDArray[np.float32] | None = None
        if self.embedder is None:
            degraded = "no embedder configured: ranked by BM25 alone"
        elif self._down is not None and time.monotonic() < self._down[0]:
            wait = self._down[0] - time.monotonic()
            degraded = (
                f"embeddings unavailable ({self._down[1]}; next try in {wait:.0f} s): ranked by BM25 alone"
            )
        elif config.mode != "bm25":
            try:
                q_vector = (await self.embedder.embed([query], "query"))[0]
            except EmbeddingError as exc:
                degraded = f"embeddings unavailable ({exc}): ranked by BM25 alone"
                if self._retry_after_s > 0:
                    self._down = (time.monotonic() + self._retry_after_s, str(exc))
            else:
                self._down = None
                snap = self._snapshot
                if snap is None or not snap.has_vector.all():
                    await self._retry_pending()
        snap = await self._current()
        dense: DenseScores | None = None
        if q_vector is not None and snap.has_vector.any():
            dense = dense_scores(snap, q_vector, query)
            missing = int((~snap.has_vector).sum())
            if missing:
                degraded = f"{missing} of {len(snap.blocks)} blocks have no vector yet: lexical rule for them"
        elif q_vector is not None and snap.blocks:
            degraded = "no block has a vector yet: ranked by BM25 alone"
        ranking = rank(
            snap.doc_of_block,
            snap.n_docs,
            snap.bm25.score(query),
            dense,
            key_hits=self._key_hits(snap, query),
            config=config,
            limit=limit,
        )
        model = self.embedder.model_id if dense is not None and self.embedder else None
        margin = None
        if ranking.margin is not None:
            first = np.unique(snap.doc_of_block, return_index=True)[1]  # each document's first block
            margin = ranking.margin.details(lambda d: snap.blocks[int(first[d])].source)
        return RetrievalResult(
            ranking.level,
            [ScoredBlock(snap.blocks[h.block], h) for h in ranking.hits],
            [ScoredBlock(snap.blocks[h.block], h) for h in ranking.candidates],
            model,
            degraded,
            margin,
        )
