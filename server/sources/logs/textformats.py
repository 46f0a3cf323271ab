"""Plain-text log line formats: the named ones shipped in `text_patterns.json` (logback, log4j,
Python logging, nginx, Apache, syslog, oslo.log, klog, ...), user-defined ones built from a regex
with named groups, and detection of the format a file is written in from a sample of its lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from pathlib import Path

from .events import http_status_level, message_level
from .timestamps import KINDS, Clock, Parser, strptime_parser

# Spellings seen in the wild, folded onto TRACE DEBUG INFO WARN ERROR FATAL.
_LEVELS = {
    "TRACE": "TRACE", "FINEST": "TRACE", "FINER": "TRACE", "DEBUG": "DEBUG", "FINE": "DEBUG",
    "INFO": "INFO", "NOTICE": "INFO", "CONFIG": "INFO", "WARN": "WARN", "WARNING": "WARN",
    "ERROR": "ERROR", "ERR": "ERROR", "SEVERE": "ERROR", "FATAL": "FATAL", "CRITICAL": "FATAL",
    "CRIT": "FATAL", "ALERT": "FATAL", "EMERG": "FATAL", "EMERGENCY": "FATAL",
}  # fmt: skip
LEVEL_REGEX = (
    r"(?i:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|SEVERE|FATAL|CRIT(?:ICAL)?|ALERT|EMERG"
    r"|FINEST|FINER|FINE|CONFIG)\b"
)
_CORE = frozenset({"timestamp", "level", "logger", "thread", "pid", "message", "service"})
# Lines that continue the previous event (stack traces, wrapped text) say nothing about the header
# format, so detection leaves them out of its count.
_CONTINUATION = re.compile(r"\s|Caused by:|Traceback |\.\.\. \d+ more|[\w.$]+(?:Exception|Error)\b")
# Aggregated output puts the source before each line: `kubectl logs --prefix` ([pod/x/c] line),
# `docker compose logs` (web-1  | line), a file name (as loghub's OpenStack sample does).
_SOURCE_PREFIX = r"(?P<source>\[[^\]]*\]|[^\s|\[]+(?:\s+\|)?)\s+"


@dataclass(frozen=True)
class ParsedLine:
    """What a header says about one line; `message` is the text after the header."""

    timestamp: datetime | None  # aware; None when the header holds no date
    level: str | None  # one of TRACE DEBUG INFO WARN ERROR FATAL
    message: str
    logger: str | None = None  # logger, component, syslog tag or module
    thread: str | None = None
    pid: str | None = None
    service: str | None = None
    fields: Mapping[str, str] = field(default_factory=dict)  # every other named group that matched


def is_continuation(line: str) -> bool:
    """A stack-trace or wrapped line: part of the event above it, not a line with a header."""
    return _CONTINUATION.match(line) is not None


def normalize_level(text: str | None) -> str | None:
    return _LEVELS.get(text.upper()) if text else None


class TextFormat:
    """One line layout: a regex anchored at the line start whose named groups fill a ParsedLine."""

    def __init__(
        self,
        name: str,
        regex: str,
        parse_time: Parser | None,
        *,
        description: str = "",
        clock: Clock | None = None,
        levels: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.regex = regex
        self._compiled = re.compile(regex)
        if "message" not in self._compiled.groupindex and "timestamp" not in self._compiled.groupindex:
            raise ValueError(f"format {name!r}: the regex needs a 'message' or a 'timestamp' group")
        self._parse_time = parse_time
        self._clock = clock or Clock()
        self._levels = dict(levels or {})
        # Ties in detection go to the format that explains more of the line.
        self.specificity = len(self._compiled.groupindex)

    def __repr__(self) -> str:
        return f"TextFormat({self.name!r})"

    def parse(self, line: str) -> ParsedLine | None:
        """The header's fields, or None when the line is not written in this format."""
        line = line.rstrip("\r\n")
        match = self._compiled.match(line)
        if match is None:
            return None
        groups = match.groupdict()
        stamp: datetime | None = None
        raw_time = groups.get("timestamp")
        if raw_time and raw_time != "-" and self._parse_time is not None:
            stamp = self._parse_time(raw_time, self._clock)
            if stamp is None and self._parse_time is not KINDS["time_only"].parse:
                return None  # digits in the right places that name no moment: not our header
        message = groups.get("message")
        if message is None:
            message = line[match.end("timestamp") :].lstrip("] ")
        level_text = groups.get("level")
        level = normalize_level(self._levels.get(level_text, level_text) if level_text else None)
        if level is None:  # an access line has no level word: its response status gives it
            level = http_status_level(groups.get("status")) or message_level(message)
        fields = {k: v.strip("[]| ") for k, v in groups.items() if k not in _CORE and v}
        return ParsedLine(
            timestamp=stamp,
            level=level,
            message=message.rstrip(),
            logger=groups.get("logger") or None,
            thread=groups.get("thread") or None,
            pid=groups.get("pid") or None,
            service=groups.get("service") or None,
            fields=fields,
        )

    def with_source_prefix(self) -> TextFormat:
        """The same format behind a per-line source label (kubectl --prefix, docker compose, file name)."""
        return TextFormat(
            f"{self.name}+prefix",
            _SOURCE_PREFIX + self.regex,
            self._parse_time,
            description=f"{self.description} (after a source label)",
            clock=self._clock,
            levels=self._levels,
        )


def _expand(regex: str, kind: str | None) -> str:
    expanded = regex.replace("{LEVEL}", LEVEL_REGEX)
    return expanded.replace("{TS}", KINDS[kind].regex) if kind is not None else expanded


@lru_cache(maxsize=8)
def shipped_formats(clock: Clock | None = None) -> tuple[TextFormat, ...]:
    """The named formats of text_patterns.json, in file order."""
    data = json.loads((Path(__file__).parent / "text_patterns.json").read_text(encoding="utf-8"))
    formats = []
    for spec in data["formats"]:
        kind = spec.get("timestamp")
        formats.append(
            TextFormat(
                spec["name"],
                _expand(spec["regex"], kind),
                KINDS[kind].parse if kind else None,
                description=spec["description"],
                clock=clock,
                levels=spec.get("levels"),
            )
        )
    return tuple(formats)


def shipped_format(name: str, clock: Clock | None = None) -> TextFormat:
    for candidate in shipped_formats(clock):
        if candidate.name == name:
            return candidate
    raise KeyError(f"no shipped text format named {name!r}")


def _any_kind(text: str, clock: Clock) -> datetime | None:
    for kind in KINDS.values():
        if re.fullmatch(kind.regex, text):
            return kind.parse(text, clock)
    return None


def user_format(
    name: str,
    regex: str,
    *,
    timestamp_format: str | None = None,
    tz: tzinfo = UTC,
    description: str = "",
) -> TextFormat:
    """A format from configuration: a regex with named groups (timestamp, level, service, logger,
    thread, pid, message; any other name lands in `fields`) and, for the timestamp group, either a
    strptime format or the name of a shipped kind (iso8601, syslog, clf, ...); without one, any
    shipped kind that matches. {LEVEL} and {TS} expand as in the shipped file."""
    kind = timestamp_format if timestamp_format in KINDS else None
    parser: Parser
    if kind is not None:
        parser = KINDS[kind].parse
    elif timestamp_format is not None:
        parser = strptime_parser(timestamp_format)
    else:
        parser = _any_kind
    try:
        return TextFormat(
            name, _expand(regex, kind), parser, description=description or "user pattern", clock=Clock(tz=tz)
        )
    except re.error as exc:
        raise ValueError(f"pattern {name!r}: invalid regex: {exc}") from exc


def detect_text_format(
    sample_lines: Sequence[str],
    formats: Sequence[TextFormat] | None = None,
    *,
    threshold: float = 0.6,
) -> TextFormat | None:
    """The format that parses the most header lines of the sample, if it parses at least `threshold`
    of them; ties go to the more specific format, and a tie between equally specific formats (or a
    sample no format explains) is ambiguous: None. Formats behind a source label are tried only when
    no plain one passes."""
    lines = [line.rstrip("\r\n") for line in sample_lines if line.strip() and not is_continuation(line)]
    if not lines:
        return None
    candidates = list(formats) if formats is not None else list(shipped_formats())
    found = _best(lines, candidates, threshold)
    if found is None:
        found = _best(lines, [f.with_source_prefix() for f in candidates], threshold)
    return found


def _best(lines: list[str], candidates: list[TextFormat], threshold: float) -> TextFormat | None:
    scored = [(sum(1 for line in lines if f.parse(line) is not None), f.specificity, f) for f in candidates]
    hits, specificity = max((s[0], s[1]) for s in scored)
    if hits < threshold * len(lines):
        return None
    top = [f for h, s, f in scored if (h, s) == (hits, specificity)]
    return top[0] if len(top) == 1 else None
