"""The index of one file: where each event starts, its time, level and service, in flat arrays
(19 bytes an event), and blocks of events with their time range, levels and services, so that a
query skips files and blocks its filters exclude and parses only the events it may return.
A file is re-indexed when its size or mtime changes."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .config import LogConfig
from .events import LEVELS, SkippedLine, SkipReport
from .layouts import LogSource, Member
from .reader import (
    GZIP_ERRORS,
    Draft,
    FileFormat,
    StreamParser,
    decode,
    detect,
    event_level,
    event_service,
    is_gzip,
    open_member,
    raw_lines,
)

LEVEL_CODES = {name: i + 1 for i, name in enumerate(LEVELS)}  # 0: a configured non-standard level


@dataclass(frozen=True)
class Block:
    first: int  # event indices [first, end)
    end: int
    start: int  # bytes [start, stop) in the (decompressed) file: first event's start, last one's end
    stop: int
    since: float
    until: float
    levels: int  # bit per level code
    services: frozenset[int]


@dataclass
class FileIndex:
    source: LogSource
    member: Member
    stamp: tuple[int, int]  # size, mtime_ns
    compressed: bool
    file_format: FileFormat
    starts: array[int] = field(default_factory=lambda: array("I"))  # from its block's start
    lines: array[int] = field(default_factory=lambda: array("I"))
    stamps: array[float] = field(default_factory=lambda: array("d"))
    levels: bytearray = field(default_factory=bytearray)
    services: array[int] = field(default_factory=lambda: array("H"))
    service_names: list[str] = field(default_factory=list)  # code → name as written
    blocks: list[Block] = field(default_factory=list)
    skipped: SkipReport = field(default_factory=SkipReport)
    escaped: bool = False  # `\u` escapes seen: non-ASCII text is not searchable as raw bytes
    joined: bool = False  # an event rebuilt from partial runtime records
    composed: bool = False  # a message made of `k=v` pairs that are not so in the file
    _block_firsts: list[int] = field(default_factory=list)

    @property
    def since(self) -> float:
        return min((b.since for b in self.blocks), default=float("inf"))

    @property
    def until(self) -> float:
        return max((b.until for b in self.blocks), default=float("-inf"))

    def service_codes(self, service: str) -> set[int]:
        wanted = service.lower()
        return {code for code, name in enumerate(self.service_names) if name.lower() == wanted}

    @property
    def count(self) -> int:
        return len(self.stamps)

    def block_of(self, i: int) -> Block:
        if len(self._block_firsts) != len(self.blocks):
            self._block_firsts = [b.first for b in self.blocks]
        return self.blocks[bisect_right(self._block_firsts, i) - 1]

    def read_block(self, handle: BinaryIO, block: Block) -> BlockBytes:
        """A block's bytes (handles of gzip files must be read in ascending block order)."""
        handle.seek(block.start)
        return BlockBytes(self, block, handle.read(block.stop - block.start))


class BlockBytes:
    """One block's bytes, from which its events are cut."""

    def __init__(self, index: FileIndex, block: Block, data: bytes) -> None:
        self.index, self.block, self.data = index, block, data

    def event(self, i: int) -> tuple[bytes, int, int]:
        """(the event's bytes, its first line number, its offset in the file): its bytes run to the
        next event, or to the end of the block's last event."""
        starts, block = self.index.starts, self.block
        start = starts[i]
        stop = starts[i + 1] if i + 1 < block.end else block.stop - block.start
        return self.data[start:stop], self.index.lines[i], block.start + start


class _Lines:
    """Raw lines of a file that end quietly at a truncated gzip stream, noting where."""

    def __init__(self, path: Path, compressed: bool, rel: str) -> None:
        self.escaped = False
        self.broken: SkippedLine | None = None
        self._path, self._compressed, self._rel = path, compressed, rel

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        number = 0
        with open_member(self._path, self._compressed) as handle:
            try:
                for number, offset, raw in raw_lines(handle):
                    if b"\\u" in raw:
                        self.escaped = True
                    yield number, offset, raw
            except GZIP_ERRORS as exc:
                self.broken = SkippedLine(self._rel, number + 1, f"compressed stream ends early ({exc})")


def _sample(path: Path, compressed: bool, count: int) -> list[str]:
    out: list[str] = []
    with open_member(path, compressed) as handle:
        try:
            for number, _, raw in raw_lines(handle):
                if number > count * 2:
                    break
                text, _ = decode(raw)
                if text is not None:
                    out.append(text)
                if len(out) >= count:
                    break
        except GZIP_ERRORS:
            pass
    return out


# A block never spans more than this, nor a gap of unreadable bytes wider than MAX_GAP between two
# of its events: a query reads whole blocks, and garbage must not make one huge.
MAX_SPAN = 16 * 2**20
MAX_GAP = 2**20


def build(source: LogSource, member: Member, config: LogConfig) -> FileIndex:
    """Reads the file once. OSError propagates: the caller reports the file as unreadable."""
    stat = member.path.stat()
    compressed = is_gzip(member.path)
    file_format = detect(_sample(member.path, compressed, config.sample_lines), config)
    index = FileIndex(source, member, (stat.st_size, stat.st_mtime_ns), compressed, file_format)
    index.skipped.keep = config.skipped_keep
    codes: dict[str, int] = {}
    lines = _Lines(member.path, compressed, member.rel)
    drafts = _drafts(StreamParser(member.rel, file_format.for_indexing()).run(lines), index.skipped)
    first, start, prev_end = 0, 0, 0  # the open block's first event and its offset; the last event's end
    # The loop runs once per event of every file: its lookups are bound to locals.
    starts, numbers, stamps, levels = index.starts, index.lines, index.stamps, index.levels
    block_events = config.block_events
    joined = composed = False
    for count, draft in enumerate(drafts):
        offset = draft.offset
        if count > first and (
            count - first >= block_events or offset - prev_end > MAX_GAP or offset - start > MAX_SPAN
        ):
            _close(index, (first, count), (start, prev_end))
            first = count
        if count == first:
            start = offset
        parsed = draft.parsed
        service = event_service(draft, source)
        code = codes.get(service)
        if code is None:
            code = codes[service] = len(codes)
            index.service_names.append(service)
            if code == 2**16 and index.services.typecode == "H":  # a field that names no service
                index.services = array("I", index.services)
        starts.append(offset - start)
        numbers.append(draft.line)
        stamps.append(draft.timestamp.timestamp())
        levels.append(LEVEL_CODES.get(event_level(parsed, config), 0))
        index.services.append(code)
        joined = joined or draft.joined
        composed = composed or getattr(parsed, "composed", False)
        prev_end = draft.end
    index.joined, index.composed = joined, composed
    if index.count > first:
        _close(index, (first, index.count), (start, prev_end))
    if lines.broken is not None:
        index.skipped.add(lines.broken)
    index.escaped = lines.escaped or file_format.container == "docker"
    return index


def _drafts(items: Iterable[Draft | SkippedLine], skipped: SkipReport) -> Iterator[Draft]:
    for item in items:
        if isinstance(item, SkippedLine):
            skipped.add(item)
        else:
            yield item


def _close(index: FileIndex, events: tuple[int, int], span: tuple[int, int]) -> None:
    first, end = events
    stamps = index.stamps[first:end]
    mask = 0
    for code in set(index.levels[first:end]):
        mask |= 1 << code
    services = frozenset(index.services[first:end])
    index.blocks.append(Block(first, end, span[0], span[1], min(stamps), max(stamps), mask, services))


_SCAN_CHUNK = 4 * 2**20
# A name containing one of these may be written escaped (JSON's `\/`, `\u0026`): never ruled out.
_ESCAPABLE = frozenset("\"\\/<>&'")


def mentions(path: Path, name: str) -> bool:
    """Whether the file's (decompressed) bytes contain the name in any letter case; True when
    that cannot be ruled out by bytes (non-ASCII or escapable names, an unreadable stream)."""
    if not name.isascii() or _ESCAPABLE.intersection(name):
        return True
    needle = name.lower().encode()
    carry = b""
    try:
        with open_member(path, is_gzip(path)) as handle:
            while chunk := handle.read(_SCAN_CHUNK):
                if needle in (carry + chunk).lower():
                    return True
                carry = chunk[-len(needle) + 1 :] if len(needle) > 1 else b""
    except GZIP_ERRORS:
        return True
    return False
