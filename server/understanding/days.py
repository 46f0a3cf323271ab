"""Days and parts of days a question gives as its window ("today", "this morning", "yesterday
evening", "last Tuesday", "昨天下午", "上周四"), and ranges of the clock ("between 2 and 4 am",
"2 点到 4 点之间"), in the tools' time forms: a day is named from the tools' now ("today",
"yesterday", "tuesday": the latest Tuesday before today), so "yesterday evening" is
("yesterday 18:00", "00:00"): from 18:00 of yesterday to the next midnight.
"""

from __future__ import annotations

import re

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

# Parts of a day, as minutes from its start. "Morning" is all of the day before noon: at noon, "this
# morning" is what happened since midnight, the small hours included.
_PARTS = {
    "morning": (0, 720),
    "afternoon": (720, 1080),
    "evening": (1080, 1440),
    "night": (1080, 1440),
    "凌晨": (0, 360),
    "清晨": (0, 720),
    "早上": (0, 720),
    "早晨": (0, 720),
    "上午": (0, 720),
    "中午": (660, 840),
    "下午": (720, 1080),
    "傍晚": (1020, 1200),
    "晚上": (1080, 1440),
    "夜里": (1080, 1440),
}
_EN_DAY = re.compile(
    r"\b(?:(?P<this>this)\s+(?P<this_part>morning|afternoon|evening)|(?P<tonight>tonight)"
    r"|(?P<today>today)|(?P<yesterday>yesterday)(?:\s+(?P<y_part>morning|afternoon|evening|night))?"
    r"|(?:(?:last|on|this past)\s+)?(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"(?:\s+(?P<w_part>morning|afternoon|evening|night))?)\b",
    re.IGNORECASE,
)
_ZH_PART = "|".join(part for part in _PARTS if not part.isascii())
_ZH_DAY = re.compile(
    rf"(?P<day>今天|今日|昨天|昨日|(?:上个?)?(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天]))?\s*"
    rf"(?P<part>{_ZH_PART})?|(?P<today_morning>今早|今晨)"
)
# A day the window starts from rather than the day it is ("since Tuesday", "从上周四以来").
SINCE = re.compile(r"\bsince\b|以来|至今|到现在|之后", re.IGNORECASE)
_HOUR = r"(?P<{name}>[01]?\d|2[0-3])(?::(?P<{name}_min>[0-5]\d))?"
_EN_BETWEEN = re.compile(
    r"\b(?:between|from)\s+"
    + _HOUR.format(name="a")
    + r"\s*(?P<a_ampm>[ap]\.?m\.?)?\s+(?:and|to|-)\s+"
    + _HOUR.format(name="b")
    + r"\s*(?P<b_ampm>[ap]\.?m\.?)?(?![\w:])",
    re.IGNORECASE,
)
_ZH_BETWEEN = re.compile(
    r"(?P<part>凌晨|早上|上午|下午|晚上)?\s*(?P<a>\d{1,2})\s*(?:点|时)\s*(?:到|至|-|~)\s*(?P<b>\d{1,2})\s*(?:点|时)"
)


def _minutes(hour: int, minute: int, ampm: str) -> int:
    if ampm.startswith("p") and hour < 12:
        hour += 12
    elif ampm.startswith("a") and hour == 12:
        hour = 0
    return hour * 60 + minute


def between(question: str) -> tuple[int, int] | None:
    """ "between 2 and 4 am", "from 22:00 to 02:00", "凌晨 2 点到 4 点": the range, in minutes."""
    en = _EN_BETWEEN.search(question)
    if en is not None:
        a_ampm = (en.group("a_ampm") or en.group("b_ampm") or "").lower()
        b_ampm = (en.group("b_ampm") or "").lower()
        if not (a_ampm or en.group("a_min") or en.group("b_min")):
            return None  # "between 2 and 4" alone is no time of day
        start = _minutes(int(en.group("a")), int(en.group("a_min") or 0), a_ampm)
        end = _minutes(int(en.group("b")), int(en.group("b_min") or 0), b_ampm)
        return start, end
    zh = _ZH_BETWEEN.search(question)
    if zh is not None:
        shift = 12 if zh.group("part") in ("下午", "晚上") else 0
        start, end = int(zh.group("a")), int(zh.group("b"))
        if start >= 24 or end >= 24:
            return None
        return (start + shift if start < 12 else start) * 60, (end + shift if end < 12 else end) * 60
    return None


def day_of(question: str) -> tuple[str | None, tuple[int, int] | None]:
    """(the day the question names, in the tools' form, or None; the part of the day it names, or
    None). A part alone names no day."""
    en = _EN_DAY.search(question)
    if en is not None:
        if en.group("this"):
            return "today", _PARTS[en.group("this_part").lower()]
        if en.group("tonight"):
            return "today", _PARTS["evening"]
        if en.group("today"):
            return "today", None
        if en.group("yesterday"):
            part = en.group("y_part")
            return "yesterday", _PARTS[part.lower()] if part else None
        part = en.group("w_part")
        return en.group("weekday").lower(), _PARTS[part.lower()] if part else None
    for zh in _ZH_DAY.finditer(question):
        if zh.group("today_morning"):
            return "today", _PARTS["早上"]
        day_text, part = zh.group("day"), zh.group("part")
        if not day_text and not part:
            continue
        day: str | None = None  # a part alone ("凌晨三点") names no day: the latest such time
        if zh.group("weekday"):
            day = _WEEKDAYS[_ZH_WEEKDAYS[zh.group("weekday")]]
        elif day_text:
            day = "yesterday" if day_text in ("昨天", "昨日") else "today"
        return day, _PARTS[part] if part else None
    return None, None


def day_spans(question: str) -> list[tuple[int, int]]:
    """Where the question names a day, a part of one or a range of the clock."""
    found = [m.span() for m in _EN_DAY.finditer(question)]
    found += [m.span() for m in _ZH_DAY.finditer(question) if m.group(0).strip()]
    found += [m.span() for m in (*_EN_BETWEEN.finditer(question), *_ZH_BETWEEN.finditer(question))]
    return found
