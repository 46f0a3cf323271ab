"""lookup_knowledge on the retrieval index: the knowledge directory and the case library.

Two groups of one `RetrievalIndex`: "files" (every `*.md` block of the knowledge directory, re-read
when a file's size or mtime changes) and "cases" (the active cases the tool is handed on each call,
re-indexed when that list changes: a new case from useful feedback, a retired one). Only texts whose
vector is in neither memory nor the store are embedded, so a changed file or one new case costs one
or two embeddings, and a restart costs none.

What a hit looks like is the lookup_knowledge item of `ScoredBlock.item` (its `match` field puts the
level and the scores into the ref text); `retrieval_details["retrieval"]` gets the method (hybrid, or
bm25 when embeddings are off or failing), the model, why it degraded, the L1 threshold and the scores
of the best documents.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from evigate.server.queries import case_structure as structure
from evigate.server.queries.text import case_keys
from evigate.server.queries.types import JSON, CaseLike, KnowledgeHits, KnowledgeQuery, ToolError

from . import sections
from .documents import Block, DocumentError, Stamp, case_block, directory_blocks, directory_stamp
from .index import RetrievalIndex, RetrievalResult, ScoredBlock, SyncReport

log = logging.getLogger(__name__)

FILES, CASES = "files", "cases"


def case_blocks(cases: Sequence[CaseLike]) -> list[Block]:
    """One block per case; its identifiers (its structured error code and alert names, and the
    alert names, exception classes, ... of its text) are its L0 keys, its structure is shown."""
    blocks = []
    for case in cases:
        block = case_block(case)
        keys = (*structure.structured_keys(case), *case_keys(f"{block.title} {block.text}"))
        extra = (*block.extra, *structure.structure_extra(case).items())
        blocks.append(replace(block, keys=tuple(dict.fromkeys(keys)), extra=extra))
    return blocks


def _stamp(directory: Path) -> Stamp:
    try:
        return directory_stamp(directory)
    except DocumentError as exc:
        raise ToolError(str(exc)) from exc


class SemanticKnowledge:
    """A `KnowledgeSearch` (server/tools/backend.py) over a RetrievalIndex."""

    def __init__(self, directory: Path, index: RetrievalIndex, prefix: str = "knowledge") -> None:
        self.directory = directory
        self.index = index
        self._prefix = prefix
        self._file_stamp: Stamp | None = None
        self._case_stamp: tuple[tuple[object, ...], ...] | None = None
        self._documents: dict[str, list[Block]] = {}  # source → its sections, in order
        self._lock = asyncio.Lock()  # one refresh at a time; searches run concurrently

    async def refresh_files(self) -> SyncReport | None:
        """Re-index the knowledge files if any changed since the last call (None: unchanged)."""
        stamp = await asyncio.to_thread(_stamp, self.directory)
        if stamp == self._file_stamp:
            return None
        async with self._lock:
            if stamp == self._file_stamp:
                return None
            try:
                blocks = await asyncio.to_thread(directory_blocks, self.directory, self._prefix)
            except DocumentError as exc:
                raise ToolError(str(exc)) from exc
            report = await self.index.replace(FILES, blocks)
            self._file_stamp = stamp
            self._documents = {}
            for block in blocks:
                self._documents.setdefault(block.source, []).append(block)
            log.info(
                "knowledge files indexed: %d blocks, %d embedded, %d from the store, %d pending",
                report.blocks,
                report.embedded,
                report.from_store,
                report.pending,
            )
            return report

    async def refresh_cases(self, cases: Sequence[CaseLike]) -> SyncReport | None:
        """The case group becomes exactly `cases` if that list changed (None: unchanged)."""
        blocks = case_blocks(cases)
        # Keys and structure too: a case is structured after it is made, with the same text.
        stamp = tuple((b.id, b.content_hash, b.keys, b.extra) for b in blocks)
        if stamp == self._case_stamp:
            return None
        async with self._lock:
            if stamp == self._case_stamp:
                return None
            report = await self.index.replace(CASES, blocks)
            self._case_stamp = stamp
            return report

    async def search(self, query: KnowledgeQuery, cases: Sequence[CaseLike]) -> KnowledgeHits:
        await self.refresh_files()
        await self.refresh_cases(cases)
        # the subject finds the document; the words asking for a section choose its section
        subject = sections.subject_of(query.query)
        result = await self.index.search(subject or query.query, limit=query.limit)
        hits, choices = self._sections(query.query, _by_structure(query.query, result.hits, cases))
        details = self.details(result)
        if choices:
            details["sections"] = choices
        return KnowledgeHits([hit.item(result.level) for hit in hits], result.level, details=details)

    def _sections(self, query: str, hits: Sequence[ScoredBlock]) -> tuple[list[ScoredBlock], list[JSON]]:
        """Each runbook hit as the section that answers the question's intent (fix, diagnose,
        what), whole, and the best runbook's global notes (escalation, owners) after the hits; with
        the reason of each choice for the trace."""
        intent = sections.intent_of(query)
        out: list[ScoredBlock] = []
        choices: list[JSON] = []
        notes: list[ScoredBlock] = []
        for hit in hits:
            blocks = self._documents.get(hit.block.source)
            if not blocks:
                out.append(hit)
                continue
            choice = sections.choose(blocks, hit.block, intent)
            if any(kept.block.id == choice.block.id for kept in out):
                continue
            out.extend(ScoredBlock(b, hit.scores) for b in choice.blocks)
            choices.append({"source": hit.block.source, "section": choice.heading, "why": choice.reason})
            if not notes:
                notes = [ScoredBlock(b, hit.scores) for b in sections.notes(blocks, choice)]
        return [*out, *notes], choices

    def details(self, result: RetrievalResult) -> dict[str, object]:
        details = result.details()
        details.pop("match_level", None)  # retrieval_details has its own
        method = details.pop("retrieval")
        config = self.index.config
        return {
            "method": method,
            "l1_threshold": config.l1_threshold,
            "l1_cross_threshold": config.l1_cross_threshold,
            **details,
        }


def _by_structure(query: str, hits: Sequence[ScoredBlock], cases: Sequence[CaseLike]) -> list[ScoredBlock]:
    """The hits with the cases' structure applied as in the lexical search (server.tools.
    case_structure): a case of another service the question names is dropped, and cases naming the
    question's service, error code or category move up; the index's order breaks ties."""
    library = [{**dict(b.extra), "kind": b.kind} for b in case_blocks(cases)]
    extras = [{**dict(h.block.extra), "kind": h.block.kind} for h in hits]
    ranks = structure.rank_cases(query, [*library, *extras])[len(library) :]
    kept = [(rank, n, hit) for n, (rank, hit) in enumerate(zip(ranks, hits, strict=True)) if rank is not None]
    return [hit for _, _, hit in sorted(kept, key=lambda k: (-(k[0] or 0), k[1]))]
