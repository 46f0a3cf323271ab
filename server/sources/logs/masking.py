"""Masking of the variable parts of a log message before template mining.

A template miner groups lines by their constant words; numbers, ids, addresses, paths, timestamps
and durations differ from line to line of one logging statement and would scatter it. This module
replaces them by `<*>` with rules that hold for any system (no per-system configuration):

- phrases spanning several words: embedded timestamps (`Fri Jul  1 07:57:30 2005`, ISO 8601) and
  quantities with a unit (`12.5 KB`, `300ms`, `3 seconds`);
- per word: a word with a digit becomes `<*>`, keeping an identifier's alphabetic prefix
  (`blk_-1608` → `blk_<*>`, `attempt_1445_0020_m_1` → `attempt_<*>`), with brackets, quotes and
  `key=` around it kept (`(uid=0)` → `(uid=<*>)`); paths and URLs become `<*>`;
- a run of value words (a list of block ids, `10.0.0.1: 11:`, `451 bytes (0.4 KB)`) collapses to
  its first, so a value written in one word here and several there falls in one template.
"""

from __future__ import annotations

import re

WILDCARD = "<*>"

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*"
_UNITS = r"(?:[kKMGTP]i?[bB](?:/s)?|[bB]ytes?|B|ms|us|µs|ns|s|secs?|seconds?|mins?|minutes?|h|hours?|days?|%)"
# Timestamps inside a message span words; one alternation scans for them (only in messages with a
# clock time: every spelling has one).
_TIME_PHRASE = re.compile(
    "|".join(
        [
            rf"\b{_DAY},?\s+{_MON}\s+\d{{1,2}}\s+\d\d:\d\d:\d\d(?:\.\d+)?(?:\s+\d{{4}})?\b",
            rf"\b{_MON}\s+\d{{1,2}},?\s+(?:\d{{4}}\s+)?\d\d:\d\d:\d\d\b",
            r"\b\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?",
        ]
    )
)
_CLOCK = re.compile(r"\d\d:\d\d")
# `12.5 KB`, `3 seconds`: the space goes, so the word rule masks number and unit as one value.
_SPACED_UNIT = re.compile(rf"(?<=\d) (?={_UNITS}(?![\w/]))")
_DIGIT_SPACE = re.compile(r"\d ")
# Punctuation around a word that belongs to the sentence, not to the value.
_LEADING = "[](){}<>\"'`,;:|"
_TRAILING = _LEADING + "."
# A piece of a word (between structural punctuation: `LOGIN(uid=0)` has LOGIN, uid and 0) that
# holds a digit is a value; an identifier's alphabetic prefix (`blk_`, `attempt_`, `MININT-`) stays.
# Non-ASCII text separates pieces too: Chinese or Japanese runs words together without spaces
# (`订单8841支付失败`), and only the number is the value there.
_STRUCTURAL = r"=()\[\]{},;\"'<>|"
_SEPARATOR = _STRUCTURAL + "\u0080-\U0010ffff"
_VALUE_PIECE = re.compile(rf"(?:(?<=[{_SEPARATOR}])|^)([A-Za-z]+[_-])?[^{_SEPARATOR}]*\d[^{_SEPARATOR}]*")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_ID_PREFIX = re.compile(r"([A-Za-z]+[_-])")
_PATH = re.compile(r"^(?:[A-Za-z][\w+.-]*:)?/+[^/\s]*(?:/[^/\s]*)+$|^[A-Za-z]:\\")


_HAS_STRUCTURAL = re.compile(rf"[{_STRUCTURAL}]")


def _mask_core(core: str) -> str:
    if _PATH.match(core):
        return WILDCARD
    if not core.isascii():
        return _VALUE_PIECE.sub(r"\g<1><*>", core)
    if _HAS_STRUCTURAL.search(core):
        key, equals, value = core.partition("=")
        if equals and not _DIGIT.search(key) and not _HAS_STRUCTURAL.search(key + value):
            return key + "=" + _mask_core(value)  # key=value, the usual structured case
        return _VALUE_PIECE.sub(r"\g<1><*>", core)
    if not _DIGIT.search(core):
        return core
    prefix = _ID_PREFIX.match(core)  # one piece, the usual case: skip the substitution
    return prefix.group(1) + WILDCARD if prefix else WILDCARD


def mask_word(word: str) -> str:
    """One whitespace-separated word with its variable parts masked."""
    if "/" not in word and "\\" not in word and not _DIGIT.search(word):
        return word  # most words of a message: constants, nothing to look at
    rest = word.lstrip(_LEADING)
    core = rest.rstrip(_TRAILING)
    return word[: len(word) - len(rest)] + _mask_core(core) + rest[len(core) :]


# Words recur across lines (constants, hosts, users): their masking is remembered, up to a bound.
_CACHE: dict[str, str] = {}
_CACHE_LIMIT = 100_000


def mask_tokens(message: str) -> list[str]:
    """The message's words with variables masked: what the template miner sees."""
    if _CLOCK.search(message):
        message = _TIME_PHRASE.sub(WILDCARD, message)
    if _DIGIT_SPACE.search(message):
        message = _SPACED_UNIT.sub("", message)
    tokens: list[str] = []
    after_value = False  # the previous word is a value only (no letters): a run to collapse
    for word in message.split():
        masked = _CACHE.get(word)
        if masked is None:
            masked = mask_word(word)
            if len(_CACHE) >= _CACHE_LIMIT:
                _CACHE.clear()
            _CACHE[word] = masked
        if WILDCARD in masked:
            value = _LETTER.search(masked) is None
            if tokens and (masked == tokens[-1] or (value and after_value)):
                continue
            after_value = value
        else:
            after_value = False
        tokens.append(masked)
    return tokens


def mask(message: str) -> str:
    return " ".join(mask_tokens(message))
