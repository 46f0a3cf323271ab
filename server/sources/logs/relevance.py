"""Relevance search over log lines: `query_logs` with `query` ranks the templates of the service and
window against the words of a question by BM25 and, when an embedder is configured, by embedding
similarity, so a paraphrase or another word order still finds the line. The keyword and pattern
modes stay exact; this one never claims a line is absent, it only orders what is there.

Terms keep identifiers whole as well as in parts: `order_id`, `billing.charge`,
`java.sql.SQLTransientConnectionException` and `OutOfMemoryError` are one term each (a question
that names one finds exactly it), and their words (`order`, `id`, `out`, `memory`, ...) are terms
too (a question that describes it in words finds it). A level word written as one (`ERROR`) is a
filter, not a term: `level_word` takes it out of the question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evigate.server.queries.text import tokenize
from evigate.server.sources.retrieval.embedder import Embedder, EmbeddingError
from evigate.server.sources.retrieval.lexical import Bm25

from .events import normalize_level

# Dotted or `::` paths (java.sql.SQLException, billing.charge, ActiveRecord::RecordNotFound),
# snake_case (order_id), CamelCase (OutOfMemoryError).
_IDENTIFIER = re.compile(
    r"[A-Za-z_$][\w$]*(?:[.:]{1,2}[A-Za-z_$][\w$]*)+|[A-Za-z][a-z0-9]*_\w+|\w*[a-z][A-Z]\w*"
)
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_LEVEL_WORD = re.compile(r"\b(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|ERRORS|FATAL|CRITICAL)\b")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
RRF_K = 60  # reciprocal-rank fusion's constant: ranks, not raw scores, are combined
MAX_EMBEDDED = 200  # templates embedded per question (the caller's first: the most recent)
DENSE_ONLY = 3  # templates the embedder alone may add (no shared word): a paraphrase's best few


def terms(text: str) -> list[str]:
    """The question's or the line's terms: tools.text's words, each identifier whole, CamelCase parts."""
    text = _POSSESSIVE.sub("", text)
    out = tokenize(text)
    for found in _IDENTIFIER.finditer(text):
        word = found.group(0)
        whole = set(tokenize(word))
        if word.lower() not in whole:
            out.append(word.lower())
        out.extend(part for part in tokenize(" ".join(_CAMEL_PART.findall(word))) if part not in whole)
    return out


def level_word(question: str) -> tuple[str | None, str]:
    """(the level a level word written in capitals names, the question without it)."""
    found = _LEVEL_WORD.search(question)
    if found is None:
        return None, question
    level = normalize_level(found.group(1).rstrip("S"))
    rest = " ".join(_LEVEL_WORD.sub(" ", question).split())
    return level, rest


@dataclass(frozen=True)
class Ranked:
    order: list[int]  # documents by relevance, best first; only those with a reason to be there
    scores: list[float]  # the fused score of each, in that order


def rank(question: str, documents: Sequence[str], dense: npt.NDArray[np.float32] | None = None) -> Ranked:
    """Documents sharing a term with the question, by BM25 fused with the embedder's order when
    `dense` (one cosine per document) is given; the embedder alone adds its best DENSE_ONLY."""
    if not documents:
        return Ranked([], [])
    index = Bm25([terms(d) for d in documents])
    wanted = terms(question)
    lexical = index.score_terms(wanted).scores if wanted else np.zeros(len(documents))
    fused = np.zeros(len(documents))
    eligible = lexical > 0
    fused[eligible] += 1.0 / (RRF_K + _ranks(lexical)[eligible])
    if dense is not None and len(dense) == len(documents):
        dense_rank = _ranks(dense.astype(np.float64))
        fused += 1.0 / (RRF_K + dense_rank)
        eligible |= dense_rank <= DENSE_ONLY
    order = [int(i) for i in np.argsort(-fused, kind="stable") if eligible[i]]
    return Ranked(order, [float(fused[i]) for i in order])


def _ranks(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """1 for the highest value, 2 for the next, ... (ties keep document order)."""
    order = np.argsort(-values, kind="stable")
    out = np.empty(len(values), dtype=np.float64)
    out[order] = np.arange(1, len(values) + 1)
    return out


async def dense_scores(
    embedder: Embedder | None, question: str, documents: Sequence[str]
) -> npt.NDArray[np.float32] | None:
    """The cosine of each document with the question, or None without an embedder or when it fails
    (the ranking is then BM25's alone)."""
    if embedder is None or not documents:
        return None
    try:
        asked = await embedder.embed([question], "query")
        passages = await embedder.embed(list(documents[:MAX_EMBEDDED]), "passage")
    except EmbeddingError:
        return None
    cosines = passages @ asked[0]
    if len(documents) > MAX_EMBEDDED:  # the rest rank by their words alone
        cosines = np.concatenate([cosines, np.full(len(documents) - MAX_EMBEDDED, -1.0, dtype=np.float32)])
    out: npt.NDArray[np.float32] = cosines.astype(np.float32)
    return out
