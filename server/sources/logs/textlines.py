"""Plain-text line formats: user patterns from configuration, the shipped named patterns (the
`textformats` module, when present), and a last-resort leading-timestamp format."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, tzinfo
from typing import cast

from .events import LineFields, LineFormat, ParsedLine, normalize_level, parse_time
from .lanes import Lane, pattern_lane
from .log_config import UserPattern
from .multiline import continues_only

_CORE = {"timestamp", "time", "level", "message", "msg", "service"}


class RawLines:
    """An application writing plain lines to a container's stdout: the runtime's record gives the
    time, the line is the message (stack-trace lines still continue the event above)."""

    name = "raw"

    def parse(self, line: str) -> ParsedLine | None:
        return None if continues_only(line) else ParsedLine(None, None, line.rstrip())


class RegexFormat:
    """A regex with named groups; the whole line must match from its start."""

    def __init__(self, pattern: UserPattern, default_tz: tzinfo) -> None:
        self.name = f"pattern:{pattern.name}"
        self._regex = re.compile(pattern.regex)
        self._time_format = pattern.time_format
        self._tz = default_tz

    def parse(self, line: str) -> ParsedLine | None:
        match = self._regex.match(line)
        if match is None:
            return None
        groups = match.groupdict()
        raw_time = groups.get("timestamp") or groups.get("time")
        stamp = self._time(raw_time) if raw_time else None
        if raw_time and stamp is None:
            return None  # a line that only looks like ours (a truncated timestamp)
        message = groups.get("message") or groups.get("msg") or ""
        fields = {k: v for k, v in groups.items() if k not in _CORE and v is not None}
        return ParsedLine(
            timestamp=stamp,
            level=normalize_level(groups.get("level")),
            message=message.rstrip(),
            service=groups.get("service") or None,
            fields=fields,
        )

    def quick(self, line: str) -> tuple[str, str | None, str | None, bool] | None:
        """What indexing needs of a matching line with a timestamp and no time_format, as parse()
        would read it (the time still to be parsed); None otherwise: parse() decides."""
        if self._time_format is not None:
            return None
        match = self._regex.match(line)
        if match is None:
            return None
        groups = match.groupdict()
        raw_time = groups.get("timestamp") or groups.get("time")
        if not raw_time:
            return None
        return raw_time, groups.get("level"), groups.get("service") or None, False

    def lane(self, line: str) -> Lane | None:
        """The pattern's lane (lanes.py): its own regex, for the lines quick() reads."""
        return pattern_lane(self._regex) if self._time_format is None else None

    def _time(self, text: str) -> datetime | None:
        if self._time_format is None:
            return parse_time(text, self._tz)
        try:
            moment = datetime.strptime(text, self._time_format)
        except ValueError:
            return None
        return (moment if moment.tzinfo else moment.replace(tzinfo=self._tz)).astimezone(UTC)


class MixedLines:
    """A plain-text format that also reads the other lines a file holds when two writers share it:
    JSON records between its lines and a line of another shipped format with a timestamp
    (gunicorn's error lines among its access lines). A line that can only continue an event (a
    frame, `Caused by:`) is never read as a start. Everything else a reader asks of the format (its
    name, quick(), lane()) is the main format's: the other lines never match its regex, so they
    always take the full parse, here."""

    def __init__(self, text: LineFormat, json_lines: LineFormat) -> None:
        self._text, self._json = text, json_lines
        self._others: list[LineFormat] | None = None

    @property
    def name(self) -> str:
        return self._text.name

    def parse(self, line: str) -> LineFields | None:
        found = self._text.parse(line)
        if found is not None or continues_only(line) or not line.strip():
            return found
        if line.lstrip().startswith("{"):
            return self._json.parse(line)
        for other in self._other_formats():
            parsed = other.parse(line)
            if parsed is not None and parsed.timestamp is not None:
                return parsed
        return None

    def _other_formats(self) -> list[LineFormat]:
        if self._others is None:
            shipped = _shipped_formats()
            self._others = [f for f in shipped if f.name != self._text.name]
        return self._others

    def __getattr__(self, name: str) -> object:
        return getattr(self._text, name)


def _shipped_formats() -> list[LineFormat]:
    try:
        module = importlib.import_module(".textformats", __package__)
    except ImportError:
        return []
    return list(module.shipped_formats())


# An ISO-like timestamp at the start, an optional level word: what most unknown formats share.
LEADING_TIMESTAMP = UserPattern(
    "leading-timestamp",
    r"\[?(?P<timestamp>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:\s?(?:Z|[+-]\d\d:?\d\d))?)\]?\s+"
    # The level: a level word the header writes (consumed), else a severity word the message starts
    # with ("Error: disk quota exceeded", "panic: ..."), read by a lookahead so the message keeps it.
    r"(?:(?=\[?(?P<level>(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|SEVERE|FATAL|CRITICAL)\b"
    r"|(?i:error|err|warning|warn|fatal|panic|critical)(?=[:\]\s])))"
    r"(?:\[?(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|SEVERE|FATAL|CRITICAL)\b\]?\s*[:\-]?\s*)?)?"
    r"(?P<message>.*)$",
)

_Detector = Callable[[list[str]], LineFormat | None]


def shipped_detector() -> _Detector | None:
    """The named patterns (logback, nginx, syslog, ...) live in a sibling module written apart from
    this reader; it is looked up at run time so the reader works with or without it."""
    try:
        module = importlib.import_module(".textformats", __package__)
    except ImportError:
        return None
    return cast("_Detector | None", getattr(module, "detect_text_format", None))


def choose_text_format(
    sample: Sequence[str], user: Sequence[RegexFormat], default_tz: tzinfo
) -> LineFormat | None:
    """User patterns first (the one matching most sample lines), then the shipped ones, then a
    leading timestamp; None when nothing matches a single line."""
    best, best_hits = None, 0
    for candidate in user:
        hits = sum(1 for line in sample if candidate.parse(line) is not None)
        if hits > best_hits:
            best, best_hits = candidate, hits
    if best is not None:
        return best
    detect = shipped_detector()
    if detect is not None:
        found = detect(list(sample))
        if found is not None:
            return found
    fallback = RegexFormat(LEADING_TIMESTAMP, default_tz)
    return fallback if any(fallback.parse(line) for line in sample) else None
