"""Indexing a file fast: chunks of bytes split into lines at C speed, and for each line of the
commonest shapes one C-level parse of just the core fields (`quick()` of the JSON, logfmt and
regex formats) with timestamps converted through a per-minute cache. Every other line (stack
traces, odd records, unreadable bytes) goes through the format's full parse and the same
start / continue / skip rules as StreamParser, so the index is the one the line-by-line reader
builds (tests/sources/logs/test_index_equivalence.py compares them)."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .config import LogConfig
from .events import LEVELS, LineFields, SkippedLine, normalize_level
from .multiline import Continuations
from .reader import MAX_LINE, decode, final_level, open_member, skip_reason
from .stamps import Stamps

if TYPE_CHECKING:
    from .index import FileIndex

LEVEL_CODES = {name: i + 1 for i, name in enumerate(LEVELS)}  # 0: a configured non-standard level
CHUNK = 4 * 2**20
# A block never spans more than this, nor a gap of unreadable bytes wider than MAX_GAP between two
# of its events: a query reads whole blocks, and garbage must not make one huge.
MAX_SPAN = 16 * 2**20
MAX_GAP = 2**20
_OVERLONG = f"longer than {MAX_LINE // 2**20} MiB"  # as reader.decode() says it


class _Quick(Protocol):
    def __call__(self, line: str) -> tuple[str, str | None, str | None, bool] | None: ...


@dataclass(slots=True)
class Event:
    """What the index keeps of an event: where it starts, its time, level and service codes, where
    its last line ends."""

    offset: int
    line: int
    stamp: float
    level: int
    service: int
    end: int


class Events:
    """Appends events to a FileIndex and cuts its blocks (of up to `block_events` events)."""

    def __init__(self, index: FileIndex, config: LogConfig) -> None:
        self.index = index
        self._block_events = config.block_events
        self.codes: dict[str, int] = {}  # service name → code
        self._first = 0  # the open block's first event, its start offset; the last event's end
        self._start = 0
        self._prev_end = 0

    def service_code(self, service: str) -> int:
        code = self.codes.get(service)
        if code is None:
            index = self.index
            code = self.codes[service] = len(self.codes)
            index.service_names.append(service)
            if code == 2**16 and index.services.typecode == "H":  # a field that names no service
                index.services = array("I", index.services)
        return code

    def add(self, event: Event) -> None:
        index, offset = self.index, event.offset
        count = len(index.stamps)
        first = self._first
        if count > first and (
            count - first >= self._block_events
            or offset - self._prev_end > MAX_GAP
            or offset - self._start > MAX_SPAN
        ):
            index.close_block((first, count), (self._start, self._prev_end))
            first = self._first = count
        if count == first:
            self._start = offset
        index.starts.append(offset - self._start)
        index.lines.append(event.line)
        index.stamps.append(event.stamp)
        index.levels.append(event.level)
        index.services.append(event.service)
        self._prev_end = event.end

    def finish(self) -> None:
        if self.index.count > self._first:
            self.index.close_block((self._first, self.index.count), (self._start, self._prev_end))


class Batch:
    """One file without a container wrapper, read in chunks."""

    def __init__(self, index: FileIndex, config: LogConfig, stop: Callable[[], bool] | None = None) -> None:
        self.index, self.config = index, config
        line_format = index.file_format.for_indexing().line_format
        self._parse = line_format.parse
        self._quick: _Quick | None = getattr(line_format, "quick", None)
        self._stamps = Stamps(config.default_tz)
        self._levels: dict[str | None, int] = {}
        self._events = Events(index, config)
        self._continuations = Continuations()
        self._open: Event | None = None
        self._stop = stop or (lambda: False)
        self.progress: Callable[[int], None] = lambda done: None  # bytes read of the file so far

    def level_code(self, raw: str | None) -> int:
        code = self._levels.get(raw)
        if code is None:
            code = self._levels[raw] = LEVEL_CODES.get(final_level(normalize_level(raw), self.config), 0)
        return code

    def run(self) -> bool:
        """Reads the file; False when stopped before the end. Gzip errors propagate: the caller
        reads the file again line by line, which keeps what came before a truncation."""
        index = self.index
        escaped = False
        number, offset, carry, overlong = 0, 0, b"", 0
        with open_member(index.member.path, index.compressed) as handle:
            while data := handle.read(CHUNK):
                if self._stop():
                    return False
                data = carry + data
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # no line ends here: hold it, or only its length if it is too long
                    if overlong or len(data) > MAX_LINE:
                        overlong += len(data)
                        data = b""
                    carry = data
                    continue
                body, carry = data[:cut], data[cut:]
                escaped = escaped or b"\\u" in body
                lines = body.split(b"\n")
                lines.pop()
                if overlong:
                    self._skip(number + 1, _OVERLONG)
                    number += 1
                    offset += overlong + len(lines[0]) + 1
                    overlong = 0
                    lines = lines[1:]
                number, offset = self._lines(lines, number, offset)
                self.progress(getattr(handle, "fileobj", handle).tell())
            if overlong or carry:
                if overlong or len(carry) >= MAX_LINE:
                    self._skip(number + 1, _OVERLONG)
                else:
                    escaped = escaped or b"\\u" in carry
                    self._lines([carry], number, offset, whole=False)
        self._close()
        self._events.finish()
        index.escaped = escaped
        return True

    def _skip(self, number: int, why: str) -> None:
        self.index.skipped.add(SkippedLine(self.index.member.rel, number, why))

    def _close(self) -> None:
        if self._open is not None:
            self._events.add(self._open)
            self._open = None

    def _lines(self, lines: list[bytes], number: int, offset: int, whole: bool = True) -> tuple[int, int]:
        """Indexes whole lines (without their newlines); returns the next line number and offset."""
        quick, stamps, level_code, levels = self._quick, self._stamps, self.level_code, self._levels
        service_code, source_service = self._events.service_code, self.index.source.service
        services, add, reset = self._events.codes, self._events.add, self._continuations.reset
        newline = 1 if whole else 0
        for raw in lines:
            number += 1
            start = offset
            offset += len(raw) + newline
            if len(raw) + newline > MAX_LINE:
                self._skip(number, _OVERLONG)
                continue
            try:
                text: str | None = raw.decode()
            except UnicodeDecodeError:
                text = None
            if text is None or not text.isprintable():
                text, why = decode(raw)
                if text is None:
                    self._skip(number, why)
                    continue
            if not text or text.isspace():
                continue
            if quick is not None and (found := quick(text)) is not None:
                stamp = stamps(found[0])
                if stamp is not None:  # the commonest line: what _exact does, with the lookups inlined
                    if self._open is not None:
                        add(self._open)
                    reset()
                    service = found[2] or source_service
                    code = services.get(service)
                    level = levels.get(found[1])
                    self._open = Event(
                        start,
                        number,
                        stamp,
                        level_code(found[1]) if level is None else level,
                        service_code(service) if code is None else code,
                        offset,
                    )
                    if found[3]:
                        self.index.composed = True
                    continue
            self._exact(text, number, start, offset, whole)
        return number, offset

    def _exact(self, text: str, number: int, start: int, end: int, whole: bool) -> None:
        """StreamParser's rules for one line (no container): a new event, a continuation, or a skip."""
        parsed: LineFields | None = self._parse(text)
        moment = parsed.timestamp if parsed is not None else None
        if parsed is not None and moment is not None:
            self._close()
            self._continuations.reset()
            own = getattr(parsed, "service", None)
            service = str(own) if own else self.index.source.service
            level = LEVEL_CODES.get(final_level(parsed.level, self.config), 0)
            self._open = Event(
                start, number, moment.timestamp(), level, self._events.service_code(service), end
            )
            self.index.composed = self.index.composed or bool(getattr(parsed, "composed", False))
            return
        if self._open is not None and self._continuations.accepts(text):
            self._open.end = max(self._open.end, end)
            return
        self._skip(number, skip_reason(parsed, self.index.file_format, whole))
