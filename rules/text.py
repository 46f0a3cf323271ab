"""Tokens for comparing an evidence excerpt with the ref text it cites.

Two views of one scan:
- `tokenize`: lowercase ASCII words / identifiers plus CJK character bigrams, so Chinese written
  without spaces still overlaps token by token (a lone CJK character counts as a unigram);
- `critical_tokens`: the tokens that must never drift between excerpt and source — anything with a
  digit (numbers, percentages, durations such as 25m / 30000ms, times, versions, IPs, HTTP 503),
  identifiers joined by '-', '_' or '.' (payment-service, db-01.prod, HikariPool-1, ERR_1042,
  ORA-00001), CamelCase and ALL-CAPS names (HighCPUUsage, HikariCP, ERROR) and `key=value` pairs
  (state=firing, current=92%), kept whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# An ASCII token is alphanumerics joined by -_.:/ (never leading or trailing), with an optional '%';
# a CJK token is a run of ideographs. Everything else separates tokens.
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_.:/][A-Za-z0-9]+)*%?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ASCII = re.compile(r"[A-Za-z0-9]+(?:[-_.:/][A-Za-z0-9]+)*%?")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Critical: a digit, an identifier joiner, camelCase (hC, iC), or a leading run of capitals
# (ERROR, HTTP, SQLException).
_CRITICAL = re.compile(r"[0-9\-_.]|[a-z][A-Z]|^[A-Z]{2,}(?:[a-z]|$)")
_CJK_START = "\u3400"
_JOINERS = frozenset("-_.:/")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

# Characters that can continue an ASCII token across a cut point (see `quotes_cleanly`).
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:/%")


def _critical_word(token: str) -> bool:
    if token.isalpha():
        # Letters only: critical when a capital follows the first letter (HighCPUUsage, ERROR,
        # SQLException) - the same as _CRITICAL, without a regex call for plain words.
        return len(token) > 1 and not token[1:].islower()
    return _CRITICAL.search(token) is not None


def critical_word(token: str) -> bool:
    """Whether one ASCII token is critical: a number, an identifier, CamelCase or ALL-CAPS."""
    return _critical_word(token)


def _bigrams(run: str) -> Iterable[str]:
    if len(run) == 1:
        return (run,)
    return (run[i : i + 2] for i in range(len(run) - 1))


def scan(text: str) -> tuple[list[str], list[str]]:
    """Return (tokens, critical) in one pass: lowercase tokens with CJK bigrams, and the critical
    tokens in their original spelling."""
    tokens: list[str] = []
    critical: list[str] = []
    prev, prev_end = "", -2
    for m in _TOKEN.finditer(text):
        tok = m.group()
        start = m.start()
        if tok[0] >= _CJK_START:
            tokens.extend(_bigrams(tok))
            prev_end = -2
            continue
        tokens.append(tok.lower())
        if start > 0 and text[start - 1] == "=" and prev_end == start - 1:
            # A `key=value` value is pinned to its key, so current=85% cannot borrow the 85% of
            # threshold=85% elsewhere in the same source.
            pair = f"{prev}={tok}"
            tokens.append(pair.lower())
            critical.append(pair)
        elif _critical_word(tok):
            critical.append(tok)
        prev, prev_end = tok, m.end()
    return tokens, critical


def compare(excerpt: str, source: Source) -> tuple[float, list[str]]:
    """(overlap, missing critical tokens) of an excerpt against a prepared source — the same answer
    as comparing `scan` of both sides, computed with C-level regex scans and set operations (the
    Gatekeeper's hot path). Critical tokens are classified only when some token is missing, and a
    pair's bare value may be named besides the pair."""
    words = _ASCII.findall(excerpt)
    tokens = set(map(str.lower, words))
    if not excerpt.isascii():
        for run in _CJK_RUN.findall(excerpt):
            tokens.update(_bigrams(run))
    pairs = _pairs(excerpt) if "=" in excerpt else []
    tokens.update(p.lower() for p in pairs)
    if not tokens:
        return 0.0, []
    missing = source.missing(tokens)
    if not missing:
        return 1.0, []
    lost = [w for w in dict.fromkeys(words) if w.lower() in missing and _critical_word(w)]
    lost.extend(p for p in dict.fromkeys(pairs) if p.lower() in missing)
    return 1.0 - len(missing) / len(tokens), lost


def _pairs(text: str) -> list[str]:
    """Every `key=value` with both sides whole ASCII tokens, as `scan` pairs them."""
    pairs = []
    at = text.find("=")
    while at >= 0:
        value = _ASCII.match(text, at + 1)
        if value is not None and at > 0:
            start = at
            while start > 0 and text[start - 1] in _TOKEN_CHARS:
                start -= 1
            # The run of token characters before '=' is tokenized exactly as in the whole text,
            # since the character before it can belong to no token.
            key = None
            for key in _ASCII.finditer(text, start, at):  # noqa: B007 - the last match is the key
                pass
            if key is not None and key.end() == at:
                pairs.append(f"{key.group()}={value.group()}")
        at = text.find("=", at + 1)
    return pairs


class Source:
    """A ref text prepared for token look-ups: lowercased once, its ASCII tokens in a set."""

    __slots__ = ("lower", "words")

    def __init__(self, text: str) -> None:
        self.lower = text.lower()
        self.words = frozenset(_ASCII.findall(self.lower))

    def has(self, token: str) -> bool:
        """Whether the lowercase `token` (from `scan`) is a token of this text."""
        return token in self.words or self._has_other(token)

    def _has_other(self, token: str) -> bool:
        # CJK bigrams and key=value pairs are never in `words`.
        if token[0] >= _CJK_START:
            return token in self.lower
        return "=" in token and contains_token(self.lower, token)

    def missing(self, tokens: set[str]) -> set[str]:
        """The distinct lowercase tokens that do not occur (a set difference for plain words)."""
        rest = tokens - self.words
        return {t for t in rest if not self._has_other(t)} if rest else rest

    def count(self, tokens: set[str]) -> int:
        """How many of the distinct lowercase tokens occur."""
        return len(tokens) - len(self.missing(tokens))


def tokenize(text: str) -> list[str]:
    """Lowercase words / identifiers plus CJK character bigrams, in text order."""
    return scan(text)[0]


def critical_tokens(text: str) -> list[str]:
    """Numbers, percentages, durations, identifiers, hosts, pool names and error codes, in order."""
    return scan(text)[1]


def has_token(text: str) -> bool:
    return _TOKEN.search(text) is not None


def quotes_cleanly(excerpt: str, source: str) -> bool:
    """True when `excerpt` occurs verbatim in `source` without cutting an ASCII token in two.

    Such a quote has exactly the tokens of that stretch of the source, so it is supported without
    tokenizing either side (the fast path of the Gatekeeper).
    """
    start = source.find(excerpt)
    if start < 0 or not excerpt:
        return False
    end = start + len(excerpt)
    if start > 0 and source[start - 1] in _TOKEN_CHARS and source[start] in _TOKEN_CHARS:
        # The quote may still be clean if it appears again further on; rare, so take the slow path.
        return False
    return not (end < len(source) and source[end - 1] in _TOKEN_CHARS and source[end] in _TOKEN_CHARS)


def _clean_start(source: str, i: int) -> bool:
    if i == 0:
        return True
    before = source[i - 1]
    if before in _ALNUM:
        return False
    return not (before in _JOINERS and i >= 2 and source[i - 2] in _ALNUM)


def _clean_end(source: str, j: int) -> bool:
    if j >= len(source) or source[j - 1] == "%":  # '%' always ends a token
        return True
    after = source[j]
    if after in _ALNUM or after == "%":
        return False
    return not (after in _JOINERS and j + 1 < len(source) and source[j + 1] in _ALNUM)


def contains_token(source_lower: str, token: str) -> bool:
    """True when the lowercase `token` (as produced by `scan`) is a whole token of the lowercased source.

    Searching the source instead of tokenizing it keeps the check at C speed: an occurrence counts
    only when no token character continues it on either side, as `scan` would have split it.
    """
    if token[0] >= _CJK_START:
        return token in source_lower
    n = len(token)
    at = source_lower.find(token)
    while at >= 0:
        if _clean_start(source_lower, at) and _clean_end(source_lower, at + n):
            return True
        at = source_lower.find(token, at + 1)
    return False


def overlap(excerpt_tokens: Iterable[str], source: Source) -> float:
    """Share of the distinct excerpt tokens found in the source; 0.0 for an excerpt without tokens."""
    distinct = set(excerpt_tokens)
    if not distinct:
        return 0.0
    return source.count(distinct) / len(distinct)


def missing_critical(excerpt_critical: Iterable[str], source: Source) -> list[str]:
    """The excerpt's critical tokens absent from the source (compared case-insensitively), deduplicated."""
    return [t for t in dict.fromkeys(excerpt_critical) if not source.has(t.lower())]
