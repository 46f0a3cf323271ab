"""The index of one file: where each event starts, its time, level and service, in flat arrays
(19 bytes an event), and blocks of events with their time range, levels and services, so that a
query skips files and blocks its filters exclude and parses only the events it may return.
A file is re-indexed when its identity (device, inode, size, mtime) changes."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from .batch import LEVEL_CODES, Batch
from .blocks import Event, Events
from .events import SkippedLine, SkipReport
from .finder import Finder
from .layouts import LogSource, Member
from .log_config import LogConfig
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
    stamp: tuple[int, int, int, int]  # identity: st_dev, st_ino, st_size, st_mtime_ns
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

    def close_block(self, events: tuple[int, int], span: tuple[int, int]) -> None:
        first, end = events
        stamps = np.frombuffer(self.stamps, np.float64, end - first, first * self.stamps.itemsize)
        since, until = float(stamps.min()), float(stamps.max())
        del stamps  # the view holds the array's buffer: it could not grow while the view lives
        mask = 0
        for code in set(self.levels[first:end]):
            mask |= 1 << code
        services = frozenset(self.services[first:end])
        self.blocks.append(Block(first, end, span[0], span[1], since, until, mask, services))

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


def identity(path: Path) -> tuple[int, int, int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def empty(
    source: LogSource, member: Member, config: LogConfig, stamp: tuple[int, int, int, int]
) -> FileIndex:
    """A file's index with nothing in it yet: its format detected from a sample of its lines."""
    compressed = is_gzip(member.path)
    file_format = detect(_sample(member.path, compressed, config.sample_lines), config)
    index = FileIndex(source, member, stamp, compressed, file_format)
    index.skipped.keep = config.skipped_keep
    return index


def build(
    source: LogSource,
    member: Member,
    config: LogConfig,
    stop: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
) -> FileIndex | None:
    """Reads the file once; None when `stop` said so before the end. `progress` hears how many of
    the file's bytes were read. OSError propagates: the caller reports the file as unreadable."""
    stamp = identity(member.path)
    index = empty(source, member, config, stamp)
    if not index.file_format.container:
        batch = Batch(index, config, stop)
        if progress is not None:
            batch.progress = progress
        try:
            return index if batch.run() else None
        except GZIP_ERRORS:
            index = empty(source, member, config, stamp)  # line by line keeps what precedes a cut
    return build_lines(index, config)


def build_lines(index: FileIndex, config: LogConfig) -> FileIndex:
    """Fills an empty index line by line through StreamParser: container wrappers, truncated
    streams, and the reference the batch reader is tested against."""
    source, member = index.source, index.member
    file_format, compressed = index.file_format, index.compressed
    events = Events(index, config)
    lines = _Lines(member.path, compressed, member.rel)
    drafts = _drafts(StreamParser(member.rel, file_format.for_indexing()).run(lines), index.skipped)
    joined = composed = False
    for draft in drafts:
        parsed = draft.parsed
        service = events.service_code(event_service(draft, source))
        level = LEVEL_CODES.get(event_level(parsed, config), 0)
        events.add(Event(draft.offset, draft.line, draft.timestamp.timestamp(), level, service, draft.end))
        joined = joined or draft.joined
        composed = composed or getattr(parsed, "composed", False)
    index.joined, index.composed = joined, composed
    events.finish()
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


_SCAN_CHUNK = 4 * 2**20
# A name containing one of these may be written escaped (JSON's `\/`, `\u0026`): never ruled out.
_ESCAPABLE = frozenset("\"\\/<>&'")


def mentions(path: Path, name: str) -> bool:
    """Whether the file's (decompressed) bytes contain the name in any letter case; True when
    that cannot be ruled out by bytes (non-ASCII or escapable names, an unreadable stream)."""
    if not name.isascii() or _ESCAPABLE.intersection(name):
        return True
    needle = name.lower().encode()
    finder = Finder(needle, caseless=True)
    carry = b""
    try:
        with open_member(path, is_gzip(path)) as handle:
            while chunk := handle.read(_SCAN_CHUNK):
                if finder.within(carry + chunk):
                    return True
                carry = chunk[-len(needle) + 1 :] if len(needle) > 1 else b""
    except GZIP_ERRORS:
        return True
    return False
