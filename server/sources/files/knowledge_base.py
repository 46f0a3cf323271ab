"""lookup_knowledge: runbooks and skill documents (Markdown + front matter) plus the case library.

L0: a key term of a document occurs in the query as a whole token (front matter `keys`, the skill
name; for cases, identifiers found in their text: alert names, exception classes, error codes, pool
and skill names). L1: BM25 over words and Chinese character bigrams; the best document must score at
least `threshold` and beat the best document of another topic by `margin` (relative). Otherwise none.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evigate.rules.enums import MatchLevel
from evigate.server.queries import case_structure as structure
from evigate.server.queries.text import case_keys, tokenize
from evigate.server.queries.types import JSON, CaseLike, KnowledgeHits, KnowledgeQuery, ToolError

DEFAULT_L1_THRESHOLD = 3.0
DEFAULT_L1_MARGIN = 0.2
MAX_BLOCK_CHARS = 600
_RELATED = 0.6  # an L1 result of another topic must score this share of the best one
_K1 = 1.2
_B = 0.75


@dataclass
class _Doc:
    source: str
    kind: str
    title: str
    topic: str
    keys: tuple[str, ...]
    extra: dict[str, str]
    sections: list[tuple[str, str]]  # (heading, one-line text)
    services: tuple[str, ...] = ()  # front matter `services:` (or `service:`)


@dataclass
class _Block:
    doc: int
    item: JSON
    length: int


@dataclass
class _Index:
    docs: list[_Doc] = field(default_factory=list)
    blocks: list[_Block] = field(default_factory=list)
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # token → (block, tf)
    avg_len: float = 1.0


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _parse_markdown(path: Path, rel: str) -> _Doc:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"knowledge file unreadable: {rel}: {exc}") from exc
    meta: Any = {}
    body = raw
    if raw.startswith("---"):
        parts = raw.split("\n---", 1)
        if len(parts) != 2:
            raise ToolError(f"corrupt knowledge file: {rel}: front matter is not closed")
        try:
            meta = yaml.safe_load(parts[0][3:]) or {}
        except yaml.YAMLError as exc:
            raise ToolError(f"corrupt knowledge file: {rel}: front matter: {exc}") from exc
        body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    if not isinstance(meta, dict):
        raise ToolError(f"corrupt knowledge file: {rel}: front matter is not a mapping")
    keys = meta.get("keys") or []
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ToolError(f"corrupt knowledge file: {rel}: keys must be a list of strings")
    title = str(meta.get("title") or path.stem)
    skill = str(meta["skill"]) if meta.get("skill") else ""
    kind = str(meta.get("kind") or ("skill" if skill else "runbook"))
    sections: list[tuple[str, str]] = []
    heading, lines = "", list[str]()
    for line in body.splitlines():
        if line.startswith("#"):
            if _one_line(" ".join(lines)):
                sections.append((heading, _one_line(" ".join(lines))))
            heading, lines = line.lstrip("#").strip(), []
        else:
            lines.append(line)
    if _one_line(" ".join(lines)):
        sections.append((heading, _one_line(" ".join(lines))))
    if not sections:
        sections.append((heading, title))
    extra = {"skill": skill} if skill else {}
    all_keys = tuple(dict.fromkeys([*keys, *([skill] if skill else [])]))
    named = meta.get("services", meta.get("service")) or []
    services = tuple(str(n) for n in ([named] if isinstance(named, str) else named) if isinstance(n, str))
    return _Doc(rel, kind, title, skill or rel, all_keys, extra, sections, services)


def _case_doc(case: CaseLike) -> _Doc:
    text = case.root_cause if case.solution == case.root_cause else f"{case.root_cause} {case.solution}"
    text = _one_line(text)
    found = case_keys(f"{case.title} {text}")
    keys = tuple(dict.fromkeys([*structure.structured_keys(case), *found]))
    extra = {
        "case_id": case.case_id,
        "fault_category": case.fault_category,
        **structure.structure_extra(case),
    }
    return _Doc(
        f"case:{case.case_id}", "case", _one_line(case.title), case.case_id, keys, extra, [("", text)]
    )


def _key_pattern(key: str) -> re.Pattern[str]:
    escaped = re.escape(key.lower())
    return re.compile(escaped if not key.isascii() else rf"(?<![a-z0-9_]){escaped}(?![a-z0-9_])")


class KnowledgeBase:
    def __init__(self, knowledge_dir: Path, threshold: float, margin: float) -> None:
        self._dir = knowledge_dir
        self.threshold = threshold
        self.margin = margin
        self._file_stamp: tuple[tuple[str, int, int], ...] | None = None
        self._file_docs: list[_Doc] = []
        self._case_stamp: tuple[object, ...] | None = None  # (file stamp, case stamp) of the index
        self._index = _Index()
        self._key_patterns: dict[str, re.Pattern[str]] = {}

    def search(self, query: KnowledgeQuery, cases: Sequence[CaseLike]) -> KnowledgeHits:
        index = self._refresh(cases)
        q_tokens = tokenize(query.query)
        scores, matched_terms = self._bm25(index, q_tokens)
        doc_best: dict[int, tuple[float, int]] = {}
        for block_no, score in enumerate(scores):
            owner = index.blocks[block_no].doc
            if owner not in doc_best or score > doc_best[owner][0]:
                doc_best[owner] = (score, block_no)
        lowered = query.query.lower()
        ranks = structure.rank_cases(query.query, [{**d.extra, "kind": d.kind} for d in index.docs])
        matched: dict[int, list[str]] = {}
        for doc_no, doc in enumerate(index.docs):
            hits = [k for k in doc.keys if self._pattern(k).search(lowered)]
            if doc.kind == "case":
                hits += structure.conditional_keys(query.query, doc.extra)
            if hits and ranks[doc_no] is not None:  # None: a case of another service
                matched[doc_no] = hits
        if matched:
            ranked = sorted(matched, key=lambda d: (-(ranks[d] or 0), -len(matched[d]), -doc_best[d][0], d))
            # Of a document found by its key, the block the query's other words point to (its steps
            # for "how do I handle X"); the key alone says only which document.
            key_tokens = {t for d in matched for key in matched[d] for t in tokenize(key)}
            rest = [t for t in q_tokens if t not in key_tokens]
            rest_scores = self._bm25(index, rest)[0] if rest else [0.0] * len(index.blocks)
            blocks = []
            for doc_no in ranked[: query.limit]:
                own = [b for b, block in enumerate(index.blocks) if block.doc == doc_no]
                by_rest = max(own, key=lambda b: (rest_scores[b], -b))
                picked = by_rest if rest_scores[by_rest] > 0 else doc_best[doc_no][1]
                item = dict(index.blocks[picked].item)
                item["matched"] = ", ".join(matched[doc_no])
                blocks.append(item)
            return KnowledgeHits(blocks, MatchLevel.L0)
        ranked = sorted(doc_best, key=lambda d: (-doc_best[d][0], d))
        if not ranked:
            return KnowledgeHits([], MatchLevel.NONE)
        top_score, top_block = doc_best[ranked[0]]
        # One coincidental rare word scores high in BM25: ask for two distinct query terms.
        needed = min(2, len(set(q_tokens)))
        if top_score < self.threshold or matched_terms[top_block] < needed:
            return KnowledgeHits([], MatchLevel.NONE)
        top_topic = index.docs[ranked[0]].topic
        runner_up = next((doc_best[d][0] for d in ranked if index.docs[d].topic != top_topic), 0.0)
        if top_score < runner_up * (1 + self.margin):
            return KnowledgeHits([], MatchLevel.NONE)
        chosen = [
            d
            for d in ranked
            if doc_best[d][0] >= self.threshold
            and matched_terms[doc_best[d][1]] >= needed
            and (index.docs[d].topic == top_topic or doc_best[d][0] >= _RELATED * top_score)
            and ranks[d] is not None
        ]
        return KnowledgeHits(
            [dict(index.blocks[doc_best[d][1]].item) for d in chosen[: query.limit]], MatchLevel.L1
        )

    def front_matter(self) -> tuple[list[str], tuple[str, ...]]:
        """(services named by the documents' `services:` front matter, every document key)."""
        self._refresh_files()
        services = [name for doc in self._file_docs for name in doc.services]
        keys = tuple(dict.fromkeys(key for doc in self._file_docs for key in doc.keys))
        return services, keys

    def best_scores(self, text: str, cases: Sequence[CaseLike] = ()) -> list[tuple[str, float]]:
        """Diagnostics for tuning the threshold: (source, best block score) per document, best first."""
        index = self._refresh(cases)
        scores, _ = self._bm25(index, tokenize(text))
        best: dict[str, float] = {}
        for block, score in zip(index.blocks, scores, strict=True):
            source = index.docs[block.doc].source
            best[source] = max(best.get(source, 0.0), score)
        return sorted(best.items(), key=lambda kv: -kv[1])

    def _pattern(self, key: str) -> re.Pattern[str]:
        pattern = self._key_patterns.get(key)
        if pattern is None:
            pattern = self._key_patterns[key] = _key_pattern(key)
        return pattern

    def _bm25(self, index: _Index, q_tokens: list[str]) -> tuple[list[float], list[int]]:
        """Per block: the BM25 score and how many distinct query terms it contains."""
        n = len(index.blocks)
        scores = [0.0] * n
        terms = [0] * n
        for token in set(q_tokens):
            postings = index.postings.get(token)
            if not postings:
                continue
            df = len(postings)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for block_no, tf in postings:
                norm = _K1 * (1 - _B + _B * index.blocks[block_no].length / index.avg_len)
                scores[block_no] += idf * tf * (_K1 + 1) / (tf + norm)
                terms[block_no] += 1
        return scores, terms

    def _refresh(self, cases: Sequence[CaseLike]) -> _Index:
        self._refresh_files()
        case_stamp = tuple(
            f"{c.case_id}:{len(c.root_cause)}:{len(c.solution)}:{structure.stamp(c)}" for c in cases
        )
        if (self._file_stamp, case_stamp) == self._case_stamp:
            return self._index
        self._case_stamp = (self._file_stamp, case_stamp)
        self._index = _build_index([*self._file_docs, *(_case_doc(c) for c in cases)])
        return self._index

    def _refresh_files(self) -> None:
        """Re-reads the documents when a file changed."""
        if not self._dir.is_dir():
            raise ToolError(f"knowledge data unavailable: {self._dir} is not a directory")
        try:
            files = sorted(self._dir.glob("*.md"))
            stats = [(p.name, p.stat()) for p in files]
            file_stamp = tuple((name, st.st_size, st.st_mtime_ns) for name, st in stats)
        except OSError as exc:
            raise ToolError(f"knowledge data unreadable: {exc}") from exc
        if file_stamp != self._file_stamp:
            self._file_docs = [_parse_markdown(p, f"knowledge/{p.name}") for p in files]
            self._file_stamp = file_stamp


def _build_index(docs: list[_Doc]) -> _Index:
    index = _Index(docs=docs)
    for doc_no, doc in enumerate(docs):
        for heading, text in doc.sections:
            item: JSON = {"source": doc.source, "kind": doc.kind, "title": doc.title}
            if heading:
                item["section"] = heading
            item.update(doc.extra)
            item["text"] = text if len(text) <= MAX_BLOCK_CHARS else text[: MAX_BLOCK_CHARS - 1] + "…"
            tokens = tokenize(f"{doc.title} {heading} {text}")
            block_no = len(index.blocks)
            index.blocks.append(_Block(doc_no, item, len(tokens)))
            for token, count in Counter(tokens).items():
                index.postings.setdefault(token, []).append((block_no, count))
    if index.blocks:
        index.avg_len = sum(b.length for b in index.blocks) / len(index.blocks) or 1.0
    return index
