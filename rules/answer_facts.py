"""The facts of a text, as the answer check compares them: NFKC (full-width forms become half-width),
lowercase, thousands separators dropped; numbers by value and unit class (92% = 0.92; durations by
their length, 30000ms = 30 s = 0.5 min), dates and times by their parts, identifiers as the
Gatekeeper's tokeniser finds them (rules.text), and `FactIndex`, the allowed material prepared for
those look-ups."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from evigate.rules.numerals import CN_DIGIT, cn_integer, is_number_words
from evigate.rules.text import critical_word

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACES = re.compile(r"\s+")


_CN_PERCENT = re.compile(r"百分之([零〇一二两三四五六七八九十百]+)(?:点([零〇一二三四五六七八九]+))?")


def _cn_percent(match: re.Match[str]) -> str:
    decimals = "".join(str(CN_DIGIT[ch]) for ch in match.group(2) or "")
    return f"{cn_integer(match.group(1))}{'.' + decimals if decimals else ''}%"


# A full-width colon ends a clause; NFKC would make it ':' and join the words around it
# ("MongoNetworkError：connect" is no identifier). Times keep theirs (２３：０５ = 23:05).
_FULL_WIDTH_COLON = re.compile(r"：(?!\s*[0-9０-９])")


def cased(text: str) -> str:
    """`normalize` without lowercasing."""
    if not text.isascii():  # ASCII is its own NFKC form, and holds no 百分之 and no full-width colon
        text = unicodedata.normalize("NFKC", _FULL_WIDTH_COLON.sub(": ", text) if "：" in text else text)
        text = _CN_PERCENT.sub(_cn_percent, text) if "百分之" in text else text
    if "," in text:
        text = _THOUSANDS.sub("", text)
    return _SPACES.sub(" ", text)


def normalize(text: str) -> str:
    """NFKC (full-width → half-width), lowercase, thousands separators dropped, spaces collapsed,
    百分之九十二 written 92%."""
    return cased(text).lower()


_ASCII = re.compile(r"[a-z0-9]+(?:[-_.:/][a-z0-9]+)*%?")
_ASCII_CASED = re.compile(r"[A-Za-z0-9]+(?:[-_.:/][A-Za-z0-9]+)*%?")
_DATE_RE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}")
_TIME_RE = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")
_NUMBER_RE = re.compile(r"(\d+(?:\.\d+)?)(%|[a-z]+)?")
_SPOKEN_NUMBER = re.compile(r"(\d+(?:\.\d+)?) ?(%|percent|毫秒|秒钟?|分钟|小时|天|次|倍|字节|[a-z]+)?")
# A unit written after the number, with or without a space.
_WORD_AFTER = re.compile(r"\s?[a-z]")
_UNIT_AFTER = re.compile(r"\s?(%|percent|毫秒|秒钟?|分钟|小时|天|次|倍|字节|[a-z]+)")
NUMBER, DATE, TIME, WORD = "number", "date", "time", "word"

_DURATION = {
    "ms": 0.001,
    "毫秒": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "秒": 1.0,
    "秒钟": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "分钟": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "小时": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
    "天": 86400.0,
}
_PERCENT = {"%", "percent"}
# Counts and sizes, by class across languages: 25 次 = 25 times, never 25 minutes.
_COUNTER = {
    "次": "times",
    "restart": "times",
    "restarts": "times",
    "time": "times",
    "times": "times",
    "倍": "x",
    "x": "x",
    "fold": "x",
    "字节": "bytes",
    "byte": "bytes",
    "bytes": "bytes",
}
# An exception or error class written in lowercase (Nullpointerexception) is still a class name.
_EXCEPTION_WORD = re.compile(r"[a-z]{3,}(?:exception|error)s?")
# Generic technical vocabulary that is no fact of any world: the words an answer uses to talk
# about CPU, memory or HTTP without naming anything that a tool result must hold.
_VOCABULARY_WORDS = (
    "cpu gpu ram jvm gc os io tcp udp ip http https api rpc grpc sql db dns tls ssl url uri id ids "
    "qps rps tps sla slo sli utc gmt ok p50 p90 p95 p99 e.g i.e etc vs json yaml n/a pod pods "
    "follow-up read-only real-time up-to-date built-in"
)
_VOCABULARY = frozenset(_VOCABULARY_WORDS.split())


def _value_key(value: float) -> str:
    return f"{value:.6g}"


def _number_keys(value: float, unit: str) -> set[str]:
    """The comparable forms of one number: by value and unit class, with % ↔ fraction and
    durations in seconds."""
    if unit in _PERCENT:
        return {f"{_value_key(value)}%", _value_key(value / 100)}
    if unit in _DURATION:
        return {f"{_value_key(value * _DURATION[unit])}s"}
    if unit in _COUNTER:
        return {f"{_value_key(value)}{_COUNTER[unit]}"}
    keys = {f"{_value_key(value)}{unit}"} if unit else {_value_key(value)}
    if not unit and 0 < value <= 1:
        keys.add(f"{_value_key(value * 100)}%")
    return keys


def facts_of(text: str) -> Iterable[tuple[str, str]]:
    """(lowercased token, kind) for every fact-bearing token of a sentence (NFKC, thousands
    separators dropped, case kept so CamelCase and ALL-CAPS can be told from plain words)."""
    return ((token, kind) for token, kind, _ in spans_of(text))


def spans_of(text: str) -> Iterable[tuple[str, str, int]]:
    """`facts_of` with where each token starts in `text`."""
    lowered = text.lower()
    for match in _ASCII_CASED.finditer(text):
        original = match.group()
        token = original.lower()
        start = match.start()
        dates = _DATE_RE.findall(token)
        times = _TIME_RE.findall(token)
        if dates or times:
            yield from ((d, DATE, start) for d in dates)
            yield from ((t, TIME, start) for t in times)
            continue
        number = _NUMBER_RE.fullmatch(token)
        if number is not None:
            unit = number.group(2) or _unit_after(lowered, match.end())
            yield f"{number.group(1)}{' ' if unit and not number.group(2) else ''}{unit}", NUMBER, start
            continue
        if (
            token not in _VOCABULARY
            and not is_number_words(token)
            and (
                any(ch.isdigit() or ch in "-_.:/" for ch in token)
                or critical_word(original)
                or _EXCEPTION_WORD.fullmatch(token)
            )
        ):
            yield token, WORD, start


def _unit_after(flat: str, end: int) -> str:
    after = _UNIT_AFTER.match(flat, end)
    if after is not None and any(after.group(1) in units for units in (_DURATION, _PERCENT, _COUNTER)):
        return after.group(1)
    return ""


_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_JOINER_SPLIT = re.compile(r"([-_.:/])")


class FactIndex:
    """Material texts prepared for look-ups."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.flat = [normalize(t) for t in texts if t]
        self.words: set[str] = set()
        self.parts: set[str] = set()
        self.numbers: set[str] = set()
        self.dates: set[tuple[int, ...]] = set()
        self.times: set[str] = set()  # every time, and its hh:mm (hh:mm:ss) prefixes
        for text, flat in zip((t for t in texts if t), self.flat, strict=True):
            self._add(text, flat)

    @classmethod
    def of(cls, text: str, flat: str) -> FactIndex:
        """The index of one text whose `normalize`d form the caller has already."""
        out = cls(())
        if text:
            out.flat.append(flat)
            out._add(text, flat)
        return out

    @classmethod
    def union(cls, indexes: Iterable[FactIndex]) -> FactIndex:
        """One index of several (the same as an index of all their texts), without re-reading them."""
        out = cls(())
        for index in indexes:
            out.flat.extend(index.flat)
            out.words |= index.words
            out.parts |= index.parts
            out.numbers |= index.numbers
            out.dates |= index.dates
            out.times |= index.times
        return out

    def _add(self, text: str, flat: str) -> None:
        # CamelCase and joined parts: "HighCPUUsage" carries "cpu", "db-01.prod" carries "db-01".
        self.parts.update(
            map(str.lower, _PART.findall(text if text.isascii() else unicodedata.normalize("NFKC", text)))
        )
        words = self.words
        for match in _ASCII.finditer(flat):
            token = match.group()
            starts_with_digit = token[0].isdigit()
            if token in words and not starts_with_digit:
                continue  # a word seen before added its parts then; a number may have another unit now
            words.add(token)
            if token.isalnum():
                self.parts.add(token)
            else:
                pieces = _JOINER_SPLIT.split(token)
                for end in range(1, len(pieces), 2):
                    self.words.add("".join(pieces[:end]))
                self.parts.update(pieces[::2])
                if "-" in token or "/" in token:
                    self.dates.update(_date_key(d) for d in _DATE_RE.findall(token))
                if ":" in token:
                    for time in _TIME_RE.findall(token):
                        fields = time.split(":")
                        self.times.update(":".join(fields[:n]) for n in range(2, len(fields) + 1))
            if starts_with_digit:
                number = _NUMBER_RE.fullmatch(token)
                if number is not None:
                    unit = number.group(2) or _unit_after(flat, match.end())
                    value = float(number.group(1))
                    if unit or not _WORD_AFTER.match(flat, match.end()):
                        self.numbers.update(_number_keys(value, unit))
                    else:  # a unit of its own ("38 slow ops/min"): a count, never a duration or share
                        self.numbers.add(_value_key(value) + "#")
                    self.numbers.add(_value_key(value) + "?")  # the bare value, for unitless answers

    def supports(self, token: str, kind: str) -> bool:
        if kind == DATE:
            return _date_key(token) in self.dates
        if kind == TIME:
            return token in self.times
        if kind == NUMBER:
            number = _SPOKEN_NUMBER.fullmatch(token)
            if number is None:
                return token in self.words
            value, unit = float(number.group(1)), number.group(2) or ""
            key = _value_key(value)
            if not unit:  # "0.92" for 92%, "25" for 25m
                return f"{key}?" in self.numbers or key in self.numbers
            # The material's unit, or a unit it never wrote ("92" → "92%"); never another unit. A
            # count may name what it counts ("220 evictions/s" = 220 次).
            return (
                bool(_number_keys(value, unit) & self.numbers)
                or key in self.numbers
                or (unit in _COUNTER and f"{key}#" in self.numbers)
            )
        return token in self.words or token in self.parts

    def quotes(self, quote: str) -> bool:
        return any(quote in flat for flat in self.flat)


def _date_key(date: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.split(r"[-/]", date))
