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
_HAS_DIGIT = re.compile(r"\d")
_IDENTIFIER_JOIN = re.compile(r"[-_.]")
_CAMEL = re.compile(r"^[A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z]|^[A-Z]{2,}[a-z]")
_ALL_CAPS = re.compile(r"^[A-Z]{2,}$")
_CJK_START = "\u3400"

# Characters that can continue an ASCII token across a cut point (see `quotes_cleanly`).
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:/%")


def _is_critical(token: str, text: str, start: int) -> bool:
    return bool(
        _HAS_DIGIT.search(token)
        or _IDENTIFIER_JOIN.search(token)
        or (start > 0 and text[start - 1] == "=")
        or _ALL_CAPS.match(token)
        or _CAMEL.match(token)
    )


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
        elif _is_critical(tok, text, start):
            critical.append(tok)
        prev, prev_end = tok, m.end()
    return tokens, critical


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


def overlap(excerpt_tokens: Iterable[str], source_tokens: frozenset[str] | set[str]) -> float:
    """Share of the distinct excerpt tokens found in the source; 0.0 for an excerpt without tokens."""
    distinct = set(excerpt_tokens)
    if not distinct:
        return 0.0
    return len(distinct & source_tokens) / len(distinct)


def missing_critical(excerpt_critical: Iterable[str], source_tokens: frozenset[str] | set[str]) -> list[str]:
    """The excerpt's critical tokens absent from the source tokens (compared case-insensitively)."""
    return [t for t in excerpt_critical if t.lower() not in source_tokens]
