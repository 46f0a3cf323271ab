"""Where a cited excerpt sits inside its evidence ref's text, and which claims an answer sentence
states: plain text in, spans and segments out, so the templates only escape and mark.

The Gatekeeper compares excerpts after normalising whitespace, punctuation and case, and lets an
ellipsis join spans (docs/design.md §5.1); the search here is equally lenient: each span's words in
order, anything that is not a word between them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_ELLIPSIS = re.compile(r"…|\.\.\.")
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=[.])\s+")
MAX_WORDS = 200  # a longer span is searched by its first words only


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    marked: bool


def _span_pattern(part: str) -> re.Pattern[str] | None:
    words = _WORD.findall(part)[:MAX_WORDS]
    if not words:
        return None
    return re.compile(r"[\W_]*".join(re.escape(w) for w in words), re.IGNORECASE)


def excerpt_spans(text: str, excerpt: str) -> list[tuple[int, int]]:
    """The character spans of `text` that `excerpt` quotes (each ellipsis-joined part after the
    previous one); empty when a part is not found."""
    spans: list[tuple[int, int]] = []
    position = 0
    for part in _ELLIPSIS.split(excerpt):
        pattern = _span_pattern(part)
        if pattern is None:
            continue
        match = pattern.search(text, position)
        if match is None:
            return []
        spans.append((match.start(), match.end()))
        position = match.end()
    return spans


def segments(text: str, excerpts: Iterable[str]) -> list[Segment]:
    """`text` cut into runs, the ones some excerpt quotes marked."""
    marks = sorted(span for excerpt in excerpts for span in excerpt_spans(text, excerpt))
    merged: list[tuple[int, int]] = []
    for start, end in marks:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    out: list[Segment] = []
    position = 0
    for start, end in merged:
        if start > position:
            out.append(Segment(text[position:start], False))
        out.append(Segment(text[start:end], True))
        position = end
    if position < len(text) or not out:
        out.append(Segment(text[position:], False))
    return out


def sentences(answer: str) -> list[str]:
    """The answer's sentences: each line, cut after sentence-ending punctuation (Chinese or not)."""
    out = []
    for line in answer.splitlines():
        for piece in _SENTENCE_END.split(line):
            if piece.strip():
                out.append(piece.strip())
    return out


def _tokens(text: str) -> set[str]:
    """Words (lower case) and, for runs of CJK characters, their character pairs."""
    tokens: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if word.isascii():
            tokens.add(word)
        else:
            tokens.update(word[i : i + 2] for i in range(max(len(word) - 1, 1)))
    return tokens


def stated_claims(sentence: str, claims: Sequence[tuple[str, str]], threshold: float = 0.6) -> list[str]:
    """The ids of the claims (id, text) this sentence states: most of the claim's words are in it."""
    said = _tokens(sentence)
    found = []
    for claim_id, text in claims:
        words = _tokens(text)
        if words and len(words & said) / len(words) >= threshold:
            found.append(claim_id)
    return found
