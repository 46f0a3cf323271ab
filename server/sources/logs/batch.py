"""Indexing a file fast: chunks of bytes split into lines at C speed, and for each line of the
commonest shapes one C-level parse of just the core fields (`quick()` of the JSON, logfmt and
regex formats) with timestamps converted through a per-minute cache. Every other line (stack
traces, odd records, unreadable bytes) goes through the format's full parse and the same
start / continue / skip rules as StreamParser, so the index is the one the line-by-line reader
builds (tests/sources/logs/test_index_equivalence.py compares them)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from .blocks import Columns, Event, Events
from .events import LEVELS, LineFields, SkippedLine, normalize_level
from .lanes import Lanes, Reads
from .log_config import LogConfig
from .multiline import TRACEBACK, Continuations
from .reader import MAX_LINE, REMEMBERED, decode, final_level, open_member, skip_reason
from .stamps import Stamps

if TYPE_CHECKING:
    from .file_index import FileIndex

LEVEL_CODES = {name: i + 1 for i, name in enumerate(LEVELS)}  # 0: a configured non-standard level
CHUNK = 4 * 2**20
_OVERLONG = f"longer than {MAX_LINE // 2**20} MiB"  # as reader.decode() says it


class _Quick(Protocol):
    def __call__(self, line: str) -> tuple[str, str | None, str | None, bool] | None: ...


class Batch:
    """One file without a container wrapper, read in chunks."""

    LEARN = 4  # lines no lane read that a chunk offers to learn a lane from

    def __init__(self, index: FileIndex, config: LogConfig, stop: Callable[[], bool] | None = None) -> None:
        self.index, self.config = index, config
        line_format = index.file_format.for_indexing().line_format
        self._parse = line_format.parse
        self._quick: _Quick | None = getattr(line_format, "quick", None)
        self._stamps = Stamps(config.default_tz)
        self._levels: dict[str | None, int] = {}
        self._events = Events(index, config)
        self._continuations = Continuations()
        self._stateless = Continuations()  # never inside a traceback: _continues keeps such lines out
        self._joined: dict[str, bool] = {}
        self._lanes = Lanes(line_format)
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
                data = carry + data if carry else data
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # no line ends here: hold it, or only its length if it is too long
                    if overlong or len(data) > MAX_LINE:
                        overlong += len(data)
                        data = b""
                    carry = data
                    continue
                body, carry = data[:cut], data[cut:]
                escaped = escaped or _escapes(body)
                if overlong:
                    first = body.find(b"\n") + 1
                    self._skip(number + 1, _OVERLONG)
                    number += 1
                    offset += overlong + first
                    overlong = 0
                    body = body[first:]
                number, offset = self._chunk(body, number, offset)
                self.progress(getattr(handle, "fileobj", handle).tell())
            if overlong or carry:
                if overlong or len(carry) >= MAX_LINE:
                    self._skip(number + 1, _OVERLONG)
                else:
                    escaped = escaped or _escapes(carry)
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

    def _chunk(self, body: bytes, number: int, offset: int) -> tuple[int, int]:
        """Indexes whole lines (each ending in a newline): those a lane reads at once (lanes.py),
        the others one by one; returns the next line number and offset."""
        text = ""  # the chunk decoded, for lanes that read text (not over bytes)
        if self._lanes.possible and not self._lanes.over_bytes:
            with contextlib.suppress(UnicodeDecodeError):
                text = body.decode()
        data = np.frombuffer(body, np.uint8)
        low = _controls(body, data) if text or self._lanes.over_bytes else data[:0]
        newline = data[low] == 10
        ends = low[newline] + 1  # where each line ends, its newline included
        count = len(ends)
        reads = self._read(text, body, ends) if count else None
        if reads is None:
            return self._lines(body.split(b"\n")[:-1], number, offset)
        starts = np.concatenate(([0], ends[:-1]))
        read = np.fromiter(map(bool, reads.times), bool, count)
        # Control characters, DEL, lines not UTF-8 (marked by their newline) and overlong lines:
        # one by one (decode() says what they are).
        controls = low[~newline]
        if reads.undecodable:
            controls = np.sort(np.concatenate((controls, ends[list(reads.undecodable)] - 1)))
        read[np.searchsorted(ends, controls, side="right")] = False
        overlong = ends - starts > MAX_LINE
        read[overlong] = False
        kept, good, times = self._timed(reads, np.flatnonzero(read))
        if not kept:
            return self._lines(body.split(b"\n")[:-1], number, offset)
        others = controls[data[controls] != 9]  # control characters other than tabs
        covered, last = self._absorb(body, (starts, ends), good, others, overlong)
        if len(kept) == count:
            levels, services = reads.levels, reads.services
        else:
            levels = list(map(reads.levels.__getitem__, kept))
            services = list(map(reads.services.__getitem__, kept))
        levels_of = self._levels
        for raw in set(levels) - levels_of.keys():
            self.level_code(raw)
        if any(reads.composed) and any(map(reads.composed.__getitem__, kept)):
            self.index.composed = True
        offsets = starts[good] + offset
        columns = Columns(
            offsets.tolist(),
            offsets,
            (good + number + 1).tolist(),
            times,
            list(map(levels_of.__getitem__, levels)),
            [],  # per run below: codes are given in the order services first appear
            (ends[last] + offset).tolist(),
        )
        # A run ends where a line between two events is neither one of them nor absorbed.
        gaps = np.cumsum(~covered)[good]
        breaks = (np.flatnonzero(np.diff(gaps) != 0) + 1).tolist()
        done = 0  # lines indexed so far
        for first, stop in zip((0, *breaks), (*breaks, len(kept)), strict=True):
            if kept[first] > done:
                self._lines(body[starts[done] : starts[kept[first]]].split(b"\n")[:-1], number + done,
                            offset + int(starts[done]))  # fmt: skip
            self._close()
            run = columns.cut(first, stop)
            run.services.extend(self._service_codes(services[first:stop]))
            self._events.extend(run.cut(0, stop - first - 1))
            self._open = run.event(stop - first - 1)
            self._continuations.reset()
            done = int(last[stop - 1]) + 1
        if done < count:
            self._lines(body[starts[done] :].split(b"\n")[:-1], number + done, offset + int(starts[done]))
        return number + count, offset + len(body)

    def _absorb(
        self,
        body: bytes,
        lines: tuple[np.ndarray, np.ndarray],
        good: np.ndarray,
        controls: np.ndarray,
        overlong: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The lines of a chunk that events cover, and each event's last line. A line no lane read
        joins the event above it when the line-by-line reader would say so (_continues): so stack traces
        do not break runs of events."""
        starts, ends = lines
        count = len(ends)
        covered = np.zeros(count, bool)
        covered[good] = True
        loose = ~covered & ~overlong
        if len(controls):  # a control character other than a tab: decode() decides
            loose[np.searchsorted(ends, controls, side="right")] = False
        loose[0] = False
        candidates = np.flatnonzero(loose)
        if len(candidates):
            joins = self._joins
            flags = covered.tolist()
            for i in candidates.tolist():
                if flags[i - 1] and joins(body[starts[i] : ends[i] - 1].decode()):
                    flags[i] = True
            covered = np.array(flags, bool)
        # An event's last line: the line before the next event or before the next line not covered.
        stops = np.flatnonzero(~covered)
        after = np.concatenate((good[1:], [count]))
        following = np.searchsorted(stops, good, side="right")
        uncovered = np.append(stops, count)[following]
        return covered, np.minimum(after, uncovered) - 1

    def _joins(self, text: str) -> bool:
        """_continues, remembered per text: stack frames repeat word for word."""
        known = self._joined.get(text)
        if known is None:
            if len(self._joined) >= REMEMBERED:
                self._joined.clear()
            known = self._joined[text] = self._continues(text)
        return known

    def _continues(self, text: str) -> bool:
        """Whether a line continues the open event as _lines and _exact would read it: it has a
        word on it, starts no event (neither quick() with a time nor the full parse reads a time),
        and Continuations takes it without changing its state (not a Python traceback's first
        line, after which the state decides; the state is then as a new event leaves it)."""
        if not text or text.isspace() or text.startswith(TRACEBACK):
            return False
        quick = self._quick
        if quick is not None and (found := quick(text)) is not None and self._stamps(found[0]) is not None:
            return False
        parsed = self._parse(text)
        if parsed is not None and parsed.timestamp is not None:
            return False
        return self._stateless.accepts(text)

    def _timed(self, reads: Reads, rows: np.ndarray) -> tuple[list[int], np.ndarray, list[float]]:
        """Of the rows a lane read, those whose time parses: as a list and an array, and their times."""
        listed = rows.tolist()
        every = len(listed) == len(reads.times)  # the common chunk: each line read by a lane
        stamps = self._stamps.many(reads.times if every else list(map(reads.times.__getitem__, listed)))
        if None not in stamps:
            return listed, rows, cast("list[float]", stamps)
        kept = [i for i, stamp in zip(listed, stamps, strict=True) if stamp is not None]
        return kept, np.array(kept, np.int64), [stamp for stamp in stamps if stamp is not None]

    def _read(self, text: str, body: bytes, ends: np.ndarray) -> Reads | None:
        """The lanes' rows for the chunk; a line no lane read and quick() reads teaches a lane."""
        lanes = self._lanes
        reads = lanes.read_bytes(body, ends) if lanes.over_bytes else lanes.read(text, len(ends))
        unread = _first_unread(reads.times, self.LEARN) if reads else range(self.LEARN)
        samples = []
        for i in unread:
            if i < len(ends):
                with contextlib.suppress(UnicodeDecodeError):
                    samples.append(body[(ends[i - 1] if i else 0) : ends[i] - 1].decode())
        if lanes.learn(samples):
            if lanes.over_bytes:
                return lanes.read_bytes(body, ends)
            if not text:
                return None  # learnt from a chunk not decoded: the next chunk reads by the lanes
            reads = lanes.read(text, len(ends))
        return reads

    def _service_codes(self, raw: list[str]) -> list[int]:
        """Codes of the services lines name ("": the file's own), new names coded in order."""
        codes, source = self._events.codes, self.index.source.service
        lookup = {}
        for name in dict.fromkeys(raw):
            service = name or source
            lookup[name] = codes[service] if service in codes else self._events.service_code(service)
        return list(map(lookup.__getitem__, raw))

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


def _first_unread(times: list[str], most: int) -> list[int]:
    """The first few rows no lane read (found by list.index, in C: most chunks have none)."""
    out: list[int] = []
    at = 0
    while len(out) < most:
        try:
            at = times.index("", at)
        except ValueError:
            break
        out.append(at)
        at += 1
    return out


def _controls(body: bytes, data: np.ndarray) -> np.ndarray:
    """Where the chunk's bytes below 32 and DEL are (DEL is rare: looked for first, by memchr, so
    most chunks take one comparison instead of three)."""
    if body.find(b"\x7f") == -1:
        return np.flatnonzero(data < 32)
    return np.flatnonzero((data < 32) | (data == 127))


def _escapes(data: bytes) -> bool:
    """Whether the bytes hold a `\\u` escape. Most chunks hold no backslash at all, which memchr
    tells at memory speed; the two-byte search runs only over those that do."""
    return data.find(b"\\") != -1 and b"\\u" in data
