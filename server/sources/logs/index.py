"""The index of one file: where each event starts, its time, level and service, in flat arrays
(23 bytes an event), and blocks of events with their time range, levels and services, so that a
query skips files and blocks its filters exclude and parses only the events it may return.
A file is re-indexed when its size or mtime changes."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

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
    start: int  # bytes [start, stop) in the (decompressed) file
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
    offsets: array[int] = field(default_factory=lambda: array("Q"))
    lines: array[int] = field(default_factory=lambda: array("I"))
    stamps: array[float] = field(default_factory=lambda: array("d"))
    levels: bytearray = field(default_factory=bytearray)
    services: array[int] = field(default_factory=lambda: array("H"))
    service_names: list[str] = field(default_factory=list)  # code → name as written
    blocks: list[Block] = field(default_factory=list)
    size: int = 0  # decompressed bytes
    skipped: SkipReport = field(default_factory=SkipReport)
    escaped: bool = False  # `\u` escapes seen: non-ASCII text is not searchable as raw bytes
    joined: bool = False  # an event rebuilt from partial runtime records
    composed: bool = False  # a message made of `k=v` pairs that are not so in the file

    @property
    def since(self) -> float:
        return min((b.since for b in self.blocks), default=float("inf"))

    @property
    def until(self) -> float:
        return max((b.until for b in self.blocks), default=float("-inf"))

    def service_codes(self, service: str) -> set[int]:
        wanted = service.lower()
        return {code for code, name in enumerate(self.service_names) if name.lower() == wanted}

    def event_range(self, i: int) -> tuple[int, int]:
        stop = self.offsets[i + 1] if i + 1 < len(self.offsets) else self.size
        return self.offsets[i], stop


class _Lines:
    """Raw lines of a file that end quietly at a truncated gzip stream, noting where."""

    def __init__(self, path: Path, compressed: bool, rel: str) -> None:
        self.end = 0
        self.escaped = False
        self.broken: SkippedLine | None = None
        self._path, self._compressed, self._rel = path, compressed, rel

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        number = 0
        with open_member(self._path, self._compressed) as handle:
            try:
                for number, offset, raw in raw_lines(handle):
                    self.end = offset + len(raw)
                    if b"\\u" in raw:
                        self.escaped = True
                    yield number, offset, raw
            except GZIP_ERRORS as exc:
                self.broken = SkippedLine(self._rel, number + 1, f"compressed stream ends early ({exc})")


def _sample(path: Path, compressed: bool, count: int) -> list[str]:
    out: list[str] = []
    with open_member(path, compressed) as handle:
        try:
            for raw in itertools.islice(handle, count * 2):
                text, _ = decode(raw)
                if text is not None:
                    out.append(text)
                if len(out) >= count:
                    break
        except GZIP_ERRORS:
            pass
    return out


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
    block: list[int] = []  # indices of the open block's events
    for draft in drafts:
        level = event_level(draft.parsed, config)
        service = event_service(draft, source)
        code = codes.setdefault(service, len(codes))
        if code == len(index.service_names):
            index.service_names.append(service)
        index.offsets.append(draft.offset)
        index.lines.append(draft.line)
        index.stamps.append(draft.timestamp.timestamp())
        index.levels.append(LEVEL_CODES.get(level, 0))
        index.services.append(code)
        index.joined = index.joined or draft.joined
        index.composed = index.composed or getattr(draft.parsed, "composed", False)
        block.append(len(index.offsets) - 1)
        if len(block) >= config.block_events:
            _close(index, block, None)
            block = []
    index.size = lines.end
    if lines.broken is not None:
        index.skipped.add(lines.broken)
    if block:
        _close(index, block, index.size)
    elif index.blocks:  # the last block ends where the file does
        last = index.blocks[-1]
        index.blocks[-1] = Block(last.first, last.end, last.start, index.size, last.since, last.until,
                                 last.levels, last.services)  # fmt: skip
    index.escaped = lines.escaped or file_format.container == "docker"
    return index


def _drafts(items: Iterable[Draft | SkippedLine], skipped: SkipReport) -> Iterator[Draft]:
    for item in items:
        if isinstance(item, SkippedLine):
            skipped.add(item)
        else:
            yield item


def _close(index: FileIndex, block: list[int], stop: int | None) -> None:
    """A block ends where the next one's first event starts (fixed up when that is known)."""
    first, end = block[0], block[-1] + 1
    if index.blocks and index.blocks[-1].stop < 0:
        prev = index.blocks[-1]
        index.blocks[-1] = Block(prev.first, prev.end, prev.start, index.offsets[first], prev.since,
                                 prev.until, prev.levels, prev.services)  # fmt: skip
    stamps = index.stamps[first:end]
    mask = 0
    for code in set(index.levels[first:end]):
        mask |= 1 << code
    index.blocks.append(
        Block(
            first,
            end,
            index.offsets[first],
            -1 if stop is None else stop,
            min(stamps),
            max(stamps),
            mask,
            frozenset(index.services[first:end]),
        )
    )
