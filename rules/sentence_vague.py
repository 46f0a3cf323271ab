"""Two meanings the sentence check reads besides states and values: a definition ("X means Y",
"意味着", "也就是说") and a vague quantity ("dozens of", "hundreds of", "几十", "上千", "大量").

A definition says what a finding is or implies; it may only restate what the bound claims say: the
words after it (names aside) are each in a bound claim or excerpt (a Chinese sentence over English
evidence: its Latin words and numbers), or the sentence is a hedged hypothesis.

A vague quantity stands for a range; a count that the bound excerpts give for the clause's subjects
(count=48, "7 restarts", "48210 messages") must fall in it, or a bound text says the same word.
Spelled-out numbers are digits by now (rules.numerals: 几十 reads 几10, 数百 reads 数100), so both
forms are matched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from evigate.rules import sentence_phrases as p
from evigate.rules.sentence_units import Unit

DEFINITION = re.compile(
    r"(?<!by )\bmeans\b(?! of\b)|\b(?:mean|meaning) that\b|\bis defined as\b|\bstands? for\b"
    r"|\brefers? to\b|\bin other words\b|\bthat is to say\b|\bwhich is to say\b|\b(?:indicates?|implies"
    r"|imply|signals?|signifies|suggests?) that\b|\bsignifies\b"
    r"|意味着|意思是|指的是|是指|也就是说|换句话说|换言之|这表明|表明了?|代表着"
)
_STOP = frozenset({
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "from", "by", "with", "is", "are",
    "was", "were", "be", "been", "being", "that", "this", "these", "those", "it", "its", "their", "there",
    "than", "more", "less", "over", "above", "below", "under", "not", "as", "which", "what", "who", "has",
    "have", "had", "will", "would", "can", "could", "may", "might", "should", "so", "such", "then", "also",
    "very",
})  # fmt: skip
_LATIN = re.compile(r"[a-z][a-z'-]{2,}|\d+(?:\.\d+)?")
_HAN = re.compile(r"[\u4e00-\u9fff]")

# (pattern, lowest, highest) of each vague quantity; the digit forms are the spelled numbers read
_VAGUE: list[tuple[re.Pattern[str], float, float]] = [
    (re.compile(r"\bdozens(?: of)?\b"), 20, 199),
    (re.compile(r"\bhundreds(?: of)?\b|(?:几|数)(?:百|100)(?![\d万千])"), 200, 9999),
    (re.compile(r"\bthousands(?: of)?\b|(?:几|数)(?:千|1000)(?![\d万])"), 2000, math.inf),
    (re.compile(r"(?:几|数)(?:十|10)(?![\d万千百])"), 20, 99),
    (re.compile(r"成百上千|上百"), 100, math.inf),
    (re.compile(r"成千上万|上千"), 1000, math.inf),
    (re.compile(r"上万|数万|几万"), 10000, math.inf),
    (
        re.compile(
            r"\b(?:lots|tons|loads|plenty|scores|masses) of\b"
            r"|\ba (?:lot|flood|storm|ton|slew|barrage|huge number|large number|great many) of\b"
            r"|\bcountless\b|\binnumerable\b"
            r"|大量|海量|无数|一大堆|大批|成堆"
        ),
        10,
        math.inf,
    ),
]
# a count an excerpt gives: a count field (rules.sentence_phrases.counts_of) or a number of things
_COUNTED = re.compile(  # not a time's seconds before a log level ("23:05:28 ERROR")
    r"(?<![\d:.\-/])(\d+)\s?(?:次|条|个|times?\b|errors?\b|warnings?\b|lines?\b|events?\b|requests?\b|timeouts?\b"
    r"|restarts?\b|failures?\b|messages?\b|entries\b|records?\b|retries\b|exceptions?\b)"
)


def definitions(clause: str) -> list[re.Match[str]]:
    return list(DEFINITION.finditer(clause))


def restates(after: str, bound: Iterable[str]) -> bool:
    """The words after a definition are each in a bound text: its Latin words and numbers when it
    has any (a Chinese sentence over English evidence), else its Chinese (two characters at a time)."""
    texts = [t for t in bound if t]
    latin = [w for w in _LATIN.findall(after) if w not in _STOP]
    if latin:
        return all(any(w in t for t in texts) for w in latin)
    han = "".join(_HAN.findall(after))
    pairs = [han[i : i + 2] for i in range(len(han) - 1)]
    return bool(pairs) and all(any(p in t for t in texts) for p in pairs)


def vague(clause: str) -> list[tuple[re.Match[str], float, float]]:
    """Each vague quantity of a clause with its range, the longest first where they overlap."""
    found: list[tuple[re.Match[str], float, float]] = []
    for pattern, low, high in _VAGUE:
        for match in pattern.finditer(clause):
            if not any(m.start() < match.end() and match.start() < m.end() for m, _, _ in found):
                found.append((match, low, high))
    return sorted(found, key=lambda f: f[0].start())


def counts_in(texts: Iterable[str], fields: Iterable[str]) -> set[int]:
    """The counts of bound texts: their count fields, and every number of things they write."""
    out = {int(f) for f in fields if f.isdigit()}
    for text in texts:
        out.update(int(n) for n in _COUNTED.findall(text))
    return out


def definition_refused(clause: str, bound: Sequence[str]) -> str | None:
    """The first definition of a clause (names as markers, taken out) that does not restate `bound`."""
    for match in definitions(clause):
        if not restates(clause[match.end() :], bound):
            return match.group()
    return None


def vague_refused(
    word: str, low: float, high: float, units: Sequence[Unit], bound: Sequence[str]
) -> str | None:
    """Why a vague quantity is refused (no count of `units` in its range, none of `bound` says it),
    or None."""
    if any(word in text for text in bound):
        return None
    counts = counts_in(
        [x for u in units for x in (u.text, u.claim_text)], [n for u in units for n in p.counts_of(u.text)]
    )
    if any(low <= n <= high for n in counts):
        return None
    return f"the bound excerpts give {', '.join(str(n) for n in sorted(counts)) or 'no count'}"
