"""What the log reader produces: typed events, the line-format seam, and skip accounting."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Protocol

# Every spelling seen in the wild mapped to one of TRACE DEBUG INFO WARN ERROR FATAL.
_LEVELS = {
    "TRACE": "TRACE", "FINEST": "TRACE", "FINER": "TRACE",
    "DEBUG": "DEBUG", "DBG": "DEBUG", "FINE": "DEBUG", "D": "DEBUG",
    "INFO": "INFO", "INF": "INFO", "INFORMATION": "INFO", "NOTICE": "INFO", "I": "INFO", "CONFIG": "INFO",
    "WARN": "WARN", "WARNING": "WARN", "WRN": "WARN", "W": "WARN",
    "ERROR": "ERROR", "ERR": "ERROR", "E": "ERROR", "SEVERE": "ERROR", "EROR": "ERROR",
    "FATAL": "FATAL", "CRITICAL": "FATAL", "CRIT": "FATAL", "CRT": "FATAL", "F": "FATAL",
    "ALERT": "FATAL", "EMERG": "FATAL", "EMERGENCY": "FATAL", "PANIC": "FATAL",
}  # fmt: skip
# Syslog severities (RFC 5424 numbers, as JSON shippers often write them).
_SYSLOG = ("FATAL", "FATAL", "FATAL", "ERROR", "WARN", "INFO", "INFO", "DEBUG")
LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")


def at_or_above(level: str) -> tuple[str, ...]:
    """The levels a level filter keeps: that level and every more severe one (ERROR keeps FATAL, so
    a question about errors finds PostgreSQL's FATAL and PANIC lines); a configured level outside
    LEVELS keeps only itself."""
    return LEVELS[LEVELS.index(level) :] if level in LEVELS else (level,)


def http_status_level(value: object) -> str | None:
    """An HTTP response status as a level: 5xx ERROR, 4xx WARN, 1xx-3xx INFO; None if it is none."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    text = str(value)
    if len(text) != 3 or not text.isdigit() or not "1" <= text[0] <= "5":
        return None
    return "ERROR" if text[0] == "5" else "WARN" if text[0] == "4" else "INFO"


def normalize_level(value: object) -> str | None:
    """WARNING→WARN, CRITICAL→FATAL, syslog numbers and bunyan/pino numbers too, and an HTTP status
    (an access record's `status`: 503→ERROR, 404→WARN, 200→INFO); None if unknown."""
    if type(value) is str and (known := _LEVELS.get(value)) is not None:
        return known  # spelled as listed: most lines of most files
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = int(value)
        if 0 <= number < len(_SYSLOG):
            return _SYSLOG[number]
        # bunyan / pino: 10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal.
        bunyan = {10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL"}.get(number)
        return bunyan or (http_status_level(number) if number == value else None)
    text = str(value).strip().strip("[]").upper()
    return _LEVELS.get(text) or http_status_level(text)


# A header without a level: the severity word a message starts with gives it ("error: dial tcp ...",
# "panic: runtime error", "[WARNING] ..."), in any case; so does one that ends the components'
# prefix Go's log package and net/http write ("http: proxy error: …", "main.go:42: error: …"): one
# or more "name:" and at most one word before it, then its colon. A word elsewhere does not ("no
# error found", "retrying after an error: …").
_SEVERITY = r"(?i:(error|err|warning|warn|fatal|panic|critical|crit|severe))"
_MESSAGE_LEVEL = re.compile(r"\s*\[?" + _SEVERITY + r"\]?(?=[:\s]|$)")
_PREFIXED_LEVEL = re.compile(r"\s*(?:[\w./-]+(?::\d+)?:\s+)+(?:[a-z]+\s+)?" + _SEVERITY + r":\s")
# A request log's line (Go and Node middleware, proxies, envoy's default): the request, optionally
# quoted with its protocol, then the response status, whose class is the line's level.
_REQUEST_LINE = re.compile(
    r'\s*"?(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|CONNECT|TRACE) /\S*(?: HTTP/[\d.]+)?"? ([1-5]\d\d)\b'
)
# A proxy's report of a request's status ("upstream fare-search:8000 returned 504 for GET /v1/fares
# after 10.00s"): a request named anywhere, and the status it got after "returned" or "status".
_REQUEST = re.compile(r"\b(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) /")
_REPORTED_STATUS = re.compile(r"\b(?:returned|responded with|status(?: code)?[:=]?)\s?([1-5]\d\d)(?![\d.])")


def message_level(message: str) -> str | None:
    """The level a message's leading severity word names (or the one after its components'
    prefix, or the status of the request it logs or reports), or None."""
    found = _MESSAGE_LEVEL.match(message) or _PREFIXED_LEVEL.match(message)
    if found:
        return normalize_level(found.group(1))
    status = _REQUEST_LINE.match(message)
    if status is None and _REQUEST.search(message):
        status = _REPORTED_STATUS.search(message)
    return http_status_level(status.group(1)) if status else None


_FRACTION = re.compile(r"[.,](\d+)")
_SPACED_ZONE = re.compile(r"\s+(Z|[+-]\d\d:?\d\d)$")
_CLF = "%d/%b/%Y:%H:%M:%S %z"


def parse_time(value: object, default_tz: tzinfo = UTC) -> datetime | None:
    """An aware UTC datetime from ISO 8601 text (any offset, Z, or none: default_tz), nginx's
    `08/Jul/2026:23:05:28 +0800`, or epoch seconds / milliseconds / nanoseconds as a number."""
    if type(value) is str:
        try:  # the common case first: plain ISO 8601
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return (moment if moment.tzinfo else moment.replace(tzinfo=default_tz)).astimezone(UTC)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return _from_epoch(float(value))
    text = str(value).strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment_or_none = _lenient(text)
        if moment_or_none is None:
            return None
        moment = moment_or_none
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=default_tz)
    return moment.astimezone(UTC)


def _lenient(text: str) -> datetime | None:
    if text.replace(".", "", 1).isdigit():
        return _from_epoch(float(text))
    # "2026-07-08 23:05:28.123 +08:00", fractions longer than microseconds, commas.
    fixed = _SPACED_ZONE.sub(r"\1", text)
    fixed = _FRACTION.sub(lambda m: "." + m.group(1)[:6].ljust(6, "0"), fixed, count=1)
    for attempt in (fixed, fixed.replace("/", "-")):
        try:
            return datetime.fromisoformat(attempt)
        except ValueError:
            pass
    try:
        return datetime.strptime(text, _CLF)
    except ValueError:
        return None


def _from_epoch(number: float) -> datetime | None:
    # Seconds until the year 5138; beyond that the writer meant milli-, micro- or nanoseconds.
    for scale in (1.0, 1e3, 1e6, 1e9):
        if abs(number) / scale < 1e11:
            try:
                return datetime.fromtimestamp(number / scale, UTC)
            except (OverflowError, OSError, ValueError):
                return None
    return None


def fixed_zone(offset_minutes: int) -> tzinfo:
    return UTC if offset_minutes == 0 else timezone(timedelta(minutes=offset_minutes))


@dataclass(frozen=True)
class ExceptionInfo:
    """One link of an exception chain: `java.sql.SQLException: message`."""

    type: str
    message: str

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass(frozen=True)
class LogEvent:
    """One event: a record plus the continuation lines (stack trace) that belong to it."""

    timestamp: datetime  # aware, UTC
    level: str  # one of LEVELS
    service: str
    message: str  # the first line's message
    fields: Mapping[str, str] = field(default_factory=dict)  # logger, thread, pod, ... as text
    file: str = ""  # path relative to the root
    line: int = 0  # 1-based line number of the first line in that file
    parser: str = ""  # e.g. "cri+json", "logfmt", "pattern:logback"
    continuation: tuple[str, ...] = ()  # the following lines of a multi-line event, as written
    exceptions: tuple[ExceptionInfo, ...] = ()  # outermost first, then each cause

    def chain_text(self) -> str:
        """`A: m ← Caused by: B: n`: what a reference text shows of the stack trace."""
        return " ← Caused by: ".join(str(e) for e in self.exceptions)

    def search_text(self) -> str:
        """What keyword and regex filters look at: message, fields' values, the stack trace."""
        parts = [self.message, *self.fields.values(), *self.continuation]
        return "\n".join(parts)


class LineFields(Protocol):
    """What a plain-text line format extracts from one line (attributes beyond these are optional:
    logger, thread, pid, component, service, fields)."""

    @property
    def timestamp(self) -> datetime | None: ...

    @property
    def level(self) -> str | None: ...

    @property
    def message(self) -> str: ...


class LineFormat(Protocol):
    """A plain-text format: named, and parsing one line or answering None when it does not match."""

    @property
    def name(self) -> str: ...

    def parse(self, line: str) -> LineFields | None: ...


@dataclass(slots=True)  # not frozen: built once per line indexed, and a frozen __init__ costs twice
class ParsedLine:
    """The reader's own LineFields (JSON, logfmt and configured patterns produce it)."""

    timestamp: datetime | None
    level: str | None
    message: str
    service: str | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    exception_text: str | None = None  # a stack trace carried in a field (JSON encoders do this)
    composed: bool = False  # no message field: the message is the other fields as `k=v` pairs


@dataclass(frozen=True)
class SkippedLine:
    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.reason})"


@dataclass
class SkipReport:
    """Lines that could not be read: a count and the first few locations."""

    count: int = 0
    first: list[SkippedLine] = field(default_factory=list)
    keep: int = 5

    def add(self, skipped: SkippedLine) -> None:
        self.count += 1
        if len(self.first) < self.keep:
            self.first.append(skipped)

    def merge(self, other: SkipReport) -> None:
        self.count += other.count
        room = self.keep - len(self.first)
        self.first.extend(other.first[: max(room, 0)])
