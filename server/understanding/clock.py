"""Windows a question gives as a time of day ("around 06:30", "at 3am", "凌晨三点", "七点多") or as a
part of the day ("last night", "昨晚"), as the tools' time-of-day form: ("06:00", "07:00") is
06:00–07:00 UTC of the latest such morning. A time "around" T is the hour centred on it; "T 多"
(seven-something) is the hour that starts at T; last night is 18:00–06:00.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from evigate.server.understanding import days
from evigate.server.understanding.vocabulary import _CN_DIGITS

_ZH_NUMBER = r"\d{1,2}|[零一两二三四五六七八九十]{1,3}"
_ZH_PART = r"凌晨|清晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|半夜"
# 凌晨三点, 早上 7 点多, 六点半左右, 下午3点15分, 10:30 左右
ZH_CLOCK = re.compile(
    rf"(?:今天|今日)?\s*(?P<part>{_ZH_PART})?\s*(?P<hour>{_ZH_NUMBER})\s*(?:点|時|时)\s*"
    rf"(?:(?P<half>半)|(?P<minute>\d{{1,2}})\s*分?)?\s*(?P<more>多)?\s*(?P<about>左右|前后)?"
)
# around 06:30, at 3am, 3:15 pm, at 03:00
EN_CLOCK = re.compile(
    r"\b(?:(?:around|about|at|near|circa)\s+)?(?P<hour>[01]?\d|2[0-3])"
    r"(?:(?::(?P<minute>[0-5]\d))\s*(?P<ampm>[ap]\.?m\.?)?|\s*(?P<ampm2>[ap]\.?m\.?))(?![\w:])",
    re.IGNORECASE,
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_EN_DATE = re.compile(
    r"\b(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})"
    r"(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{4}))?\b",
    re.IGNORECASE,
)
_ISO_DATE = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b")
_ZH_DATE = re.compile(r"(?:(?P<year>\d{4})\s*年\s*)?(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号]")
LAST_NIGHT = re.compile(r"\b(?:last night|overnight)\b|昨晚|昨天晚上|昨夜|昨天夜里", re.IGNORECASE)


def _zh_hour(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" not in text:
        return _CN_DIGITS.get(text, 0) if text != "零" else 0
    tens, _, ones = text.partition("十")
    return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (_CN_DIGITS.get(ones, 0) if ones else 0)


def _clock(minutes: int) -> str:
    minutes %= 1440
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _around(hour: int, minute: int, more: bool) -> tuple[int, int]:
    start = hour * 60 + minute
    return (start, start + 60) if more else (start - 30, start + 30)


def _date(question: str) -> tuple[datetime | None, bool]:
    """(the day the question names with its year, whether it names a day at all)."""
    for pattern in (_ISO_DATE, _EN_DATE, _ZH_DATE):
        m = pattern.search(question)
        if m is None:
            continue
        month_text = m.group("month")
        month = int(month_text) if month_text.isdigit() else _MONTHS.index(month_text[:3].lower()) + 1
        if m.group("year") is None:
            return None, True
        try:
            return datetime(int(m.group("year")), month, int(m.group("day"))), True
        except ValueError:
            return None, True
    return None, False


def clock_window(question: str) -> tuple[str, str] | None:
    """(since, until) as UTC times of day, or as ISO-8601 times when the question also names the
    date ("August 2, 2025 around 13:45", "on 2026-11-17"), or from a day named from now's
    ("yesterday 14:00", "today", "tuesday": days.py); None when it names no time, or a day without
    its year (a window of the latest such time of day would be another day)."""
    span = days.between(question) or _clock_minutes(question)
    date, named = _date(question)
    if date is not None:
        start, end = (date + timedelta(minutes=m) for m in span or (0, 1440))
        return f"{start:%Y-%m-%dT%H:%M:%SZ}", f"{end:%Y-%m-%dT%H:%M:%SZ}"
    if named:
        return None
    day, part = days.day_of(question)
    if span is not None and LAST_NIGHT.search(question) is None and day is not None and span[0] >= 0:
        return f"{day} {_clock(span[0])}", _clock(span[1])
    if span is not None:
        return _clock(span[0]), _clock(span[1])
    if day is None and part is None:
        return None
    day = day or "today"
    if part is None:
        # "since last Thursday", "从上周四以来": from that day to now; "last Thursday": that day
        return (day, "now") if day == "today" or days.SINCE.search(question) else (day, "00:00")
    return f"{day} {_clock(part[0])}", _clock(part[1])


def _clock_minutes(question: str) -> tuple[int, int] | None:
    """The window as minutes from the day's start (the night: from 18:00 to 06:00 the next day)."""
    if LAST_NIGHT.search(question):
        return 18 * 60, 30 * 60
    for zh in ZH_CLOCK.finditer(question):
        said = zh.group("part") or zh.group("half") or zh.group("minute") or zh.group("about")
        if not zh.group("hour").isdigit() and not said:
            continue  # "一点" is also "a little"
        hour = _zh_hour(zh.group("hour"))
        part = zh.group("part") or ""
        if part in ("下午", "傍晚", "晚上", "夜里") and hour < 12:
            hour += 12
        minute = 30 if zh.group("half") else int(zh.group("minute") or 0)
        if hour < 24 and minute < 60:
            return _around(hour, minute, bool(zh.group("more")))
    for en in EN_CLOCK.finditer(question):
        ampm = (en.group("ampm") or en.group("ampm2") or "").lower()
        if not ampm and en.group("minute") is None:
            continue  # a bare number is no time of day
        hour, minute = int(en.group("hour")), int(en.group("minute") or 0)
        if ampm.startswith("p") and hour < 12:
            hour += 12
        elif ampm.startswith("a") and hour == 12:
            hour = 0
        return _around(hour, minute, False)
    return None


def clock_spans(question: str) -> list[tuple[int, int]]:
    """Where the question names a time of day (never part of a log question's subject)."""
    found = [*LAST_NIGHT.finditer(question), *ZH_CLOCK.finditer(question)]
    found += [m for m in EN_CLOCK.finditer(question) if m.group("minute") or m.group("ampm2")]
    return [*(m.span() for m in found), *days.day_spans(question)]
