"""Where a cited excerpt sits inside its evidence ref's text: plain text in, spans and segments
out, so the templates only escape and mark.

The Gatekeeper compares excerpts after normalising whitespace, punctuation and case, and lets an
ellipsis join spans (docs/design.md §5.1); the search here is equally lenient: each span's words in
order, anything that is not a word between them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_ELLIPSIS = re.compile(r"…|\.\.\.")
_WORD = re.compile(r"\w+")
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
