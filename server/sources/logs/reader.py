"""Reading one file: bytes → lines → (container records →) the application's format → events.

A file's format is detected once from a sample of its lines and named in every event it yields
(`cri+json`, `docker+pattern:logback`, `logfmt`). Lines that are undecodable, binary, or neither
start nor continue an event are yielded as SkippedLine, never raised."""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from .containers import DOCKER_SERVICE_KEYS, Fragment, Joiner, looks_like
from .events import (
    LEVELS,
    ExceptionInfo,
    LineFields,
    LineFormat,
    LogEvent,
    ParsedLine,
    SkippedLine,
    message_level,
    normalize_level,
)
from .jsonlines import JsonLines
from .layouts import LogSource
from .log_config import LogConfig
from .logfmt import Logfmt
from .multiline import Continuations, continues_only, exception_chain
from .textlines import MixedLines, RawLines, RegexFormat, choose_text_format

_BINARY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_GZIP_MAGIC = b"\x1f\x8b"
_NORMAL = frozenset(LEVELS)
MAX_LINE = 2**20
REMEMBERED = 4096  # lines a reader remembers the verdict on (stack frames: see EventParser.starts)
OVERLONG = b"\x00(overlong)"  # stands for a line too long to hold; decode() explains it
# A truncated or corrupt .gz ends its stream early: what was read before stays.
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def is_gzip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def open_member(path: Path, compressed: bool) -> BinaryIO:
    if compressed:
        return gzip.GzipFile(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def raw_lines(handle: BinaryIO, line: int = 1, offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """(line number, offset of its first byte, bytes): offsets count decompressed bytes. A line
    longer than MAX_LINE (a binary file without newlines) is never held whole: it comes as OVERLONG."""
    read = handle.readline
    while raw := read(MAX_LINE):
        length = len(raw)
        if length == MAX_LINE and not raw.endswith(b"\n"):
            while more := read(MAX_LINE):
                length += len(more)
                if more.endswith(b"\n"):
                    break
            raw = OVERLONG
        yield line, offset, raw
        offset += length
        line += 1


def decode(raw: bytes) -> tuple[str | None, str]:
    """The line's text, or None and why not."""
    if raw is OVERLONG:
        return None, f"longer than {MAX_LINE // 2**20} MiB"
    try:
        text = raw.rstrip(b"\r\n").decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if text.isprintable():  # no control character at all: the common case, one C-speed pass
        return text, ""
    if "\x1b" in text:
        text = _ANSI.sub("", text)  # colour codes from a terminal-minded logger
    if _BINARY.search(text):
        return None, "binary"
    return text, ""


class _NoFormat:
    name = "unknown"

    def parse(self, line: str) -> LineFields | None:
        return None


@dataclass(frozen=True)
class FileFormat:
    container: str  # "cri", "docker" or ""
    line_format: LineFormat

    def for_indexing(self) -> FileFormat:
        """JSON and logfmt can skip building fields and messages when only the index is wanted."""
        if isinstance(self.line_format, JsonLines | Logfmt):
            return FileFormat(self.container, self.line_format.light())
        return self

    def for_mining(self) -> FileFormat:
        """JSON and logfmt reading time, level, service and message only: what templates need."""
        if isinstance(self.line_format, JsonLines | Logfmt):
            return FileFormat(self.container, self.line_format.light(with_message=True))
        return self

    @property
    def name(self) -> str:
        """The application format's name (a format written elsewhere may not carry one)."""
        return str(getattr(self.line_format, "name", type(self.line_format).__name__))

    @property
    def parser(self) -> str:
        name = self.name
        return f"{self.container}+{name}" if self.container else name


def _majority(hits: int, total: int) -> bool:
    return total > 0 and hits * 2 >= total


def detect(sample: list[str], config: LogConfig) -> FileFormat:
    """The container wrapper, then the application format of the lines inside it."""
    lines = [s for s in sample if s.strip()]
    container = ""
    for candidate in ("cri", "docker"):
        if _majority(sum(looks_like(candidate, s) for s in lines), len(lines)):
            container = candidate
            break
    inner = lines
    if container:
        joiner = Joiner(container)
        inner = []
        for s in lines:
            joined = joiner.feed(0, 0, s)
            if joined:
                inner.append(joined.fragment.text)
    # Stack traces say nothing of the format: a JSON file may print them raw between its records.
    continuations = Continuations()
    starts = [s for s in inner if s.strip() and not continuations.accepts(s)]
    tz = config.default_tz
    json_format = JsonLines(config.fields, tz)
    if _majority(sum(json_format.parse(s) is not None for s in starts), len(starts)):
        return FileFormat(container, json_format)
    # Prose with two `k=v` pairs parses as logfmt: a record needs a time or a level word too, and a
    # status alone is none (a message says `status=200` as often as a record does).
    worded = tuple(key for key in config.fields.level if key != "status") or config.fields.level
    probe = Logfmt(replace(config.fields, level=worded), tz)
    parsed = [probe.parse(s) for s in starts]
    if _majority(
        sum(p is not None and (p.timestamp is not None or p.level is not None) for p in parsed), len(starts)
    ):
        return FileFormat(container, Logfmt(config.fields, tz))
    user = [RegexFormat(p, tz) for p in config.patterns]
    text = choose_text_format(starts, user, tz)
    if text is not None:
        text = MixedLines(text, json_format)
    if text is None and container:
        return FileFormat(container, RawLines())  # the runtime's records carry the time
    return FileFormat(container, text if text is not None else _NoFormat())


@dataclass(slots=True)
class Draft:
    """An event being assembled: its first line parsed, the continuation lines collected."""

    line: int
    offset: int  # where its first line starts
    end: int  # where its last line ends
    parsed: LineFields
    timestamp: datetime
    container: Fragment | None
    joined: bool = False  # rebuilt from partial runtime records: its bytes are split by wrappers
    continuation: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Line:
    """One line of the application's output, wherever it came from."""

    number: int
    offset: int
    end: int
    text: str
    fragment: Fragment | None = None
    joined: bool = False
    whole: bool = True  # ended by a newline (a last line without one may be cut off)


class StreamParser:
    """Turns the lines of one file (or a slice of it starting at an event) into drafts and skips."""

    def __init__(self, rel: str, file_format: FileFormat, unparsed: set[str] | None = None) -> None:
        self._rel = rel
        self._format = file_format
        self._continuations = Continuations()
        self._current: Draft | None = None
        # Texts the format is known to read as nothing (stack frames): kept by an EventParser
        # across the events it reads, since parse() depends on the text alone.
        self._unparsed = unparsed

    def run(self, lines: Iterable[tuple[int, int, bytes]]) -> Iterator[Draft | SkippedLine]:
        container = self._format.container
        joiner = Joiner(container) if container else None
        self._current = None
        last_end = 0
        take = self._take
        rel = self._rel
        for number, offset, raw in lines:
            last_end = offset + len(raw)
            text, why = decode(raw)
            if text is None:
                yield SkippedLine(rel, number, why)
                continue
            if not text or text.isspace():
                continue
            if joiner is None:
                done = take(_Line(number, offset, last_end, text, whole=raw[-1:] == b"\n"))
                if done is not None:
                    yield done
                continue
            joined = joiner.feed(number, offset, text)
            if joined is False:
                yield SkippedLine(rel, number, f"not {container}")
            elif joined is not None:
                frag = joined.fragment
                done = take(_Line(joined.line, joined.offset, last_end, frag.text, frag, joined.partial_join))
                if done is not None:
                    yield done
        if joiner is not None and (rest := joiner.flush()) is not None:
            frag = rest.fragment
            done = take(_Line(rest.line, rest.offset, last_end, frag.text, frag, True, whole=False))
            if done is not None:
                yield done
        if self._current is not None:
            yield self._current

    def _take(self, line: _Line) -> Draft | SkippedLine | None:
        """A new event (then the previous one, complete, is returned), a continuation, or a skipped
        line. A plain function, not a generator: it runs once per line of every file indexed."""
        current = self._current
        unparsed = self._unparsed
        if unparsed is not None and line.text in unparsed:
            parsed = None
        else:
            parsed = self._format.line_format.parse(line.text)
            if parsed is None and unparsed is not None:
                if len(unparsed) >= REMEMBERED:
                    unparsed.clear()
                unparsed.add(line.text)
        if parsed is not None:
            moment = parsed.timestamp or (line.fragment.time if line.fragment is not None else None)
            if moment is not None:
                self._continuations.reset()
                self._current = Draft(
                    line.number, line.offset, line.end, parsed, moment, line.fragment, line.joined
                )
                return current
        if current is not None and self._continuations.accepts(line.text):
            current.continuation.append(line.text)
            current.end = max(current.end, line.end)
            current.joined = current.joined or line.joined
            return None
        stamp = line.fragment.time if line.fragment is not None else None
        if parsed is None and stamp is not None and _odd_line(line.text):
            # A container's line in no format the file is read in: as it is, timed by the runtime,
            # its level the severity word it starts with (a program's odd line is still evidence).
            text = line.text.rstrip()
            self._continuations.reset()
            raw = ParsedLine(None, message_level(text), text)
            self._current = Draft(line.number, line.offset, line.end, raw, stamp, line.fragment, line.joined)
            return current
        return SkippedLine(self._rel, line.number, skip_reason(parsed, self._format, line.whole))


def _odd_line(text: str) -> bool:
    """A line read as it is when its container's file format does not read it: not empty, not a
    continuation, not a broken JSON record (a truncated record is bad data, not a message)."""
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith("{") and not continues_only(text)


def finish(draft: Draft, source: LogSource, file_format: FileFormat, rel: str, config: LogConfig) -> LogEvent:
    """The typed event: level normalised, service resolved, stack trace read into a chain."""
    parsed = draft.parsed
    continuation = event_continuation(draft)
    chain: tuple[ExceptionInfo, ...] = exception_chain(continuation)
    return LogEvent(
        timestamp=draft.timestamp,
        level=event_level(parsed, config),
        service=event_service(draft, source),
        message=parsed.message,
        fields=event_fields(draft, source),
        file=rel,
        line=draft.line,
        parser=file_format.parser,
        continuation=tuple(continuation),
        exceptions=chain,
    )


def event_fields(draft: Draft, source: LogSource) -> dict[str, str]:
    """The event's fields: the layout's, the container runtime's, the record's own."""
    parsed = draft.parsed
    fields: dict[str, str] = dict(source.fields)
    if draft.container is not None:
        fields["stream"] = draft.container.stream
        fields.update(draft.container.attrs)
    for name in ("logger", "thread", "pid", "component"):
        value = getattr(parsed, name, None)
        if value not in (None, ""):
            fields[name] = str(value)
    fields.update(getattr(parsed, "fields", None) or {})
    return fields


def event_continuation(draft: Draft) -> list[str]:
    """The lines after the first, then a stack trace the record carries in a field."""
    continuation = list(draft.continuation)
    carried = getattr(draft.parsed, "exception_text", None)
    if carried:
        continuation.extend(line for line in carried.splitlines() if line.strip())
    return continuation


def skip_reason(parsed: LineFields | None, file_format: FileFormat, whole: bool) -> str:
    """Why a line that neither starts nor continues an event is skipped."""
    if parsed is not None:
        return "no timestamp"
    if isinstance(file_format.line_format, _NoFormat):
        return "format not recognised"
    return "truncated" if not whole else f"not {file_format.name}"


def event_level(parsed: LineFields, config: LogConfig) -> str:
    return final_level(parsed.level, config)


def final_level(level: str | None, config: LogConfig) -> str:
    """A parsed level (or none) as the event's: one of LEVELS, else the configured default."""
    if level in _NORMAL:
        return level
    return normalize_level(level) or config.default_level


def event_service(draft: Draft, source: LogSource) -> str:
    """The record's own service field, then the container runtime's labels, then the layout's."""
    own = getattr(draft.parsed, "service", None)
    if own:
        return str(own)
    if draft.container is not None:
        for key in DOCKER_SERVICE_KEYS:
            if draft.container.attrs.get(key):
                return draft.container.attrs[key]
    return source.service
