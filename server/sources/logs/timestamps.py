"""Timestamp spellings of plain-text log headers: a regex fragment to find each and a parser that
turns the matched text into an aware datetime.

Parsing builds the datetime from the digits directly rather than through `strptime`: a summary reads
hundreds of thousands of lines and strptime costs several times more per call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo

MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1
    )
}
_MON = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"


@dataclass(frozen=True)
class Clock:
    """What a header leaves out: its time zone (most write local time without one) and, for syslog
    and klog, the year — taken as the latest year that does not put the line in the future."""

    tz: tzinfo = UTC
    now: datetime | None = None  # None: the wall clock at parse time

    def year_for(self, month: int, day: int) -> int:
        now = (self.now or datetime.now(UTC)).astimezone(self.tz)
        return now.year - 1 if (month, day) > (now.month, now.day) else now.year


Parser = Callable[[str, Clock], datetime | None]


def _fraction(text: str | None) -> int:
    return int((text or "0")[:6].ljust(6, "0"))


def _zone(text: str | None, clock: Clock) -> tzinfo:
    if not text:
        return clock.tz
    if text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


def _build(
    clock: Clock, ymd: tuple[int, int, int], hms: tuple[int, int, int], frac: str | None, zone: str | None
) -> datetime | None:
    try:
        return datetime(*ymd, *hms, _fraction(frac), tzinfo=_zone(zone, clock))
    except ValueError:
        return None  # 31 February: a line that only looks like a header


def _hms(text: str) -> tuple[int, int, int]:
    return int(text[0:2]), int(text[3:5]), int(text[6:8])


_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d:\d\d:\d\d)(?:[.,](\d+))?\s?(Z|[+-]\d\d(?::?\d\d)?)?$")


def _iso8601(text: str, clock: Clock) -> datetime | None:
    m = _ISO.match(text)
    if m is None:
        return None
    y, mo, d, t, frac, zone = m.groups()
    return _build(clock, (int(y), int(mo), int(d)), _hms(t), frac, zone)


_SLASHED = re.compile(r"(\d{2,4})/(\d\d)/(\d\d) (\d\d:\d\d:\d\d)(?:[.,](\d+))?$")


def _slashed(text: str, clock: Clock) -> datetime | None:
    m = _SLASHED.match(text)
    if m is None:
        return None
    y, mo, d, t, frac = m.groups()
    year = int(y) + (2000 if len(y) == 2 else 0)
    return _build(clock, (year, int(mo), int(d)), _hms(t), frac, None)


_SYSLOG = re.compile(rf"({_MON}) +(\d{{1,2}}) (\d\d:\d\d:\d\d)(?:\.(\d+))?$")


def _syslog(text: str, clock: Clock) -> datetime | None:
    m = _SYSLOG.match(text)
    if m is None:
        return None
    mon, d, t, frac = m.groups()
    month, day = MONTHS[mon], int(d)
    return _build(clock, (clock.year_for(month, day), month, day), _hms(t), frac, None)


_APACHE = re.compile(rf"{_DAY} ({_MON}) ([ \d]\d) (\d\d:\d\d:\d\d)(?:\.(\d+))? (\d{{4}})$")


def _apache(text: str, clock: Clock) -> datetime | None:
    m = _APACHE.match(text)
    if m is None:
        return None
    mon, d, t, frac, y = m.groups()
    return _build(clock, (int(y), MONTHS[mon], int(d)), _hms(t), frac, None)


def _clf(text: str, clock: Clock) -> datetime | None:
    # 08/Jul/2026:23:05:28 +0800
    ymd = (int(text[7:11]), MONTHS[text[3:6]], int(text[0:2]))
    return _build(clock, ymd, _hms(text[12:20]), None, text[21:])


def _compact(text: str, clock: Clock) -> datetime | None:
    # yyMMdd HHmmss, as Hadoop 0.x's HDFS wrote it
    t = text[7:13]
    hms = (int(t[0:2]), int(t[2:4]), int(t[4:6]))
    return _build(clock, (2000 + int(text[0:2]), int(text[2:4]), int(text[4:6])), hms, None, None)


def _klog(text: str, clock: Clock) -> datetime | None:
    # MMdd HH:mm:ss.uuuuuu (Kubernetes klog, glog)
    month, day = int(text[0:2]), int(text[2:4])
    return _build(clock, (clock.year_for(month, day), month, day), _hms(text[5:13]), text[14:], None)


def _month_day(text: str, clock: Clock) -> datetime | None:
    # MM-dd HH:mm:ss.SSS (Android logcat's threadtime)
    month, day = int(text[0:2]), int(text[3:5])
    return _build(clock, (clock.year_for(month, day), month, day), _hms(text[6:14]), text[15:] or None, None)


_DAY_MONTH = re.compile(rf"(\d\d) ({_MON})(?: (\d{{4}}))? (\d\d:\d\d:\d\d)(?:\.(\d+))?$")


def _day_month(text: str, clock: Clock) -> datetime | None:
    # dd Mon [yyyy] HH:mm:ss.SSS (Redis; without the year before 3.2)
    m = _DAY_MONTH.match(text)
    if m is None:
        return None
    d, mon, y, t, frac = m.groups()
    month, day = MONTHS[mon], int(d)
    year = int(y) if y else clock.year_for(month, day)
    return _build(clock, (year, month, day), _hms(t), frac, None)


def _time_only(text: str, clock: Clock) -> datetime | None:
    return None  # logback's default layout writes no date: the time alone names no moment


@dataclass(frozen=True)
class TimestampKind:
    regex: str
    parse: Parser


_HMS = r"\d\d:\d\d:\d\d"
KINDS: dict[str, TimestampKind] = {
    "iso8601": TimestampKind(
        rf"\d{{4}}-\d\d-\d\d[T ]{_HMS}(?:[.,]\d{{1,9}})?(?:\s?(?:Z|[+-]\d\d(?::?\d\d)?))?", _iso8601
    ),
    "slashed": TimestampKind(rf"\d{{4}}/\d\d/\d\d {_HMS}(?:[.,]\d{{1,9}})?", _slashed),
    "slashed_short": TimestampKind(rf"\d\d/\d\d/\d\d {_HMS}", _slashed),
    "syslog": TimestampKind(rf"{_MON} [ \d]?\d {_HMS}(?:\.\d{{1,6}})?", _syslog),
    "apache": TimestampKind(rf"{_DAY} {_MON} [ \d]\d {_HMS}(?:\.\d{{1,6}})? \d{{4}}", _apache),
    "clf": TimestampKind(rf"\d\d/{_MON}/\d{{4}}:{_HMS} [+-]\d{{4}}", _clf),
    "compact": TimestampKind(r"\d{6} \d{6}", _compact),
    "month_day": TimestampKind(rf"\d\d-\d\d {_HMS}(?:\.\d{{1,6}})?", _month_day),
    "day_month": TimestampKind(rf"\d\d {_MON}(?: \d{{4}})? {_HMS}(?:\.\d{{1,6}})?", _day_month),
    "klog": TimestampKind(rf"\d{{4}} {_HMS}\.\d{{6}}", _klog),
    "time_only": TimestampKind(rf"{_HMS}(?:[.,]\d{{1,9}})?", _time_only),
}


def strptime_parser(time_format: str) -> Parser:
    """A parser for a user pattern's own `strptime` format."""

    def parse(text: str, clock: Clock) -> datetime | None:
        try:
            moment = datetime.strptime(text, time_format)
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=clock.tz)

    return parse
