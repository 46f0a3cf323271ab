"""The query over a log tree: service, level, keyword, regex and time window, newest first.

Each file is indexed on first use (and again when it changes). A query skips files and blocks
whose services, levels or time range its filters exclude; a keyword is searched as bytes in the
blocks it must read, so only events containing it are parsed; without a text filter the index
alone counts the matches and only the returned events are parsed."""

from __future__ import annotations

import heapq
import io
import re
import threading
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evigate.server.tools.backend import TimeWindow, ToolError

from .config import LogConfig
from .events import LogEvent, SkippedLine, SkipReport, normalize_level
from .index import LEVEL_CODES, Block, BlockBytes, FileIndex, build, mentions
from .layouts import LogSource, Member, discover
from .reader import Draft, StreamParser, finish, open_member, raw_lines

_UNBOUNDED = TimeWindow(None, None)
# Characters JSON and logfmt writers escape: a keyword containing one is not searched as raw bytes.
_ESCAPED_BY_WRITERS = re.compile(r'["\\/<>&\'\x00-\x1f]')


@dataclass(frozen=True)
class LogSearch:
    service: str | None = None
    level: str | None = None
    keyword: str | None = None  # case-insensitive substring of message, fields or stack trace
    regex: str | None = None  # re.search over the same text
    window: TimeWindow = _UNBOUNDED
    limit: int = 20


@dataclass
class SearchResult:
    events: list[LogEvent]  # newest first, at most the limit
    total: int  # how many matched in all
    skipped: SkipReport  # unreadable lines in the files this query had to read
    files_read: list[str] = field(default_factory=list)  # those with blocks its filters could not exclude
    parsers: dict[str, str] = field(default_factory=dict)  # each file read → the parser that read it


@dataclass
class Snapshot:
    indexes: list[FileIndex]
    unreadable: list[tuple[str, SkippedLine]]  # (the layout's service, why) of files not opened
    complete: bool  # every file is indexed (or unreadable)


# A heap entry: (epoch seconds, file order, event index, the event or None until materialized).
_Entry = tuple[float, int, int, LogEvent | None]


class LogReader:
    """Holds the indexes of one log tree across queries; safe to share between threads."""

    def __init__(self, config: LogConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._indexes: dict[str, FileIndex] = {}
        # (file, size, mtime) → services whose names its bytes do not contain
        self._absent: dict[tuple[str, int, int], set[str]] = {}

    def refresh(self, service: str | None = None) -> Snapshot:
        """The current index of every file that may hold the service (every file without one).

        A file not indexed yet whose place in the tree names another service is indexed only if
        its bytes contain the service's name (a scan at grep speed, remembered per file version):
        the first query about one service does not parse the whole tree."""
        root = self.config.root
        if not root.is_dir():
            raise ToolError(f"log data unavailable: {root} is not a directory")
        snapshot = Snapshot([], [], complete=True)
        files = 0
        with self._lock:
            seen: set[str] = set()
            for source in discover(self.config):
                for member in source.members:
                    key = str(member.path)
                    seen.add(key)
                    files += 1
                    try:
                        stat = member.path.stat()
                        stamp = (stat.st_size, stat.st_mtime_ns)
                        index = self._indexes.get(key)
                        if index is None or index.stamp != stamp:
                            if service is not None and not self._may_hold(source, member, stamp, service):
                                snapshot.complete = False
                                continue
                            index = build(source, member, self.config)
                            self._indexes[key] = index
                    except OSError as exc:
                        why = f"unreadable: {exc.strerror or exc}"
                        snapshot.unreadable.append((source.service, SkippedLine(member.rel, 0, why)))
                        continue
                    snapshot.indexes.append(index)
            for gone in set(self._indexes) - seen:
                del self._indexes[gone]
        if not files:
            raise ToolError(f"log data unavailable: no log files under {root}")
        return snapshot

    def _may_hold(self, source: LogSource, member: Member, stamp: tuple[int, int], service: str) -> bool:
        wanted = service.lower()
        if source.service.lower() == wanted:
            return True
        absent = self._absent.setdefault((str(member.path), *stamp), set())
        if wanted in absent:
            return False
        if mentions(member.path, wanted):
            return True
        absent.add(wanted)
        return False

    def search(self, query: LogSearch) -> SearchResult:
        snapshot = self.refresh(query.service)
        indexes, unreadable_files = snapshot.indexes, snapshot.unreadable
        if snapshot.complete and not any(index.count for index in indexes):
            everything = SkipReport(keep=self.config.skipped_keep)
            for _, line in unreadable_files:
                everything.add(line)
            raise ToolError(
                f"no readable log line under {self.config.root}: {_describe(indexes, everything)}"
            )
        wanted = query.service.lower() if query.service is not None else None
        unreadable = SkipReport(keep=self.config.skipped_keep)
        for service, line in unreadable_files:
            if wanted is None or service.lower() == wanted:
                unreadable.add(line)
        level = None
        if query.level is not None:
            level = normalize_level(query.level) or query.level.upper()
        regex = re.compile(query.regex) if query.regex else None
        skipped = SkipReport(keep=self.config.skipped_keep)
        skipped.merge(unreadable)
        heap: list[_Entry] = []
        total = 0
        selected: list[FileIndex] = []
        consulted: dict[str, str] = {}
        for order, index in enumerate(indexes):
            codes = _wanted_services(index, query.service)
            if codes is None:
                continue
            selected.append(index)
            if not _overlaps(index.since, index.until, query.window) and index.count:
                continue
            skipped.merge(index.skipped)
            level_code = LEVEL_CODES.get(level, 0) if level is not None else None
            blocks = [b for b in index.blocks if _block_wanted(b, codes, level_code, query.window)]
            if not blocks:
                continue
            consulted[index.member.rel] = index.file_format.parser
            scan = _Scan(index, self.config, codes=codes, level=level_code, query=query, regex=regex)
            for entry in scan.entries(order, blocks):
                total += 1
                if len(heap) < query.limit:
                    heapq.heappush(heap, entry)
                elif heap and entry[:3] > heap[0][:3]:
                    heapq.heapreplace(heap, entry)
        readable = any(index.count for index in selected)
        if (selected or unreadable.count) and not readable and skipped.count:
            raise ToolError(f"no readable log line for this query: {_describe(selected, unreadable)}")
        events = _materialize(sorted(heap, key=lambda e: e[:3], reverse=True), indexes, self.config)
        return SearchResult(events, total, skipped, list(consulted), consulted)


def _describe(indexes: list[FileIndex], unreadable: SkipReport) -> str:
    report = SkipReport()
    report.merge(unreadable)
    for index in indexes:
        report.merge(index.skipped)
    where = ", ".join(str(s) for s in report.first)
    return f"{report.count} lines skipped (first: {where})" if report.count else "no log events"


def _wanted_services(index: FileIndex, service: str | None) -> set[int] | None:
    """The service codes a query keeps in this file (all of them without a service filter), or None
    when the file holds nothing of that service. A file with no readable event belongs to the
    service its place in the tree names, so that its skipped lines are reported to that query."""
    if service is None:
        return set(range(len(index.service_names)))
    codes = index.service_codes(service)
    if codes or (not index.count and index.source.service.lower() == service.lower()):
        return codes
    return None


def _overlaps(since: float, until: float, window: TimeWindow) -> bool:
    return (window.since is None or until >= window.since.timestamp()) and (
        window.until is None or since <= window.until.timestamp()
    )


def _block_wanted(block: Block, codes: set[int], level: int | None, window: TimeWindow) -> bool:
    if level is not None and not block.levels >> level & 1:
        return False
    return _overlaps(block.since, block.until, window) and not codes.isdisjoint(block.services)


class _Scan:
    """One file's part of a query."""

    def __init__(
        self,
        index: FileIndex,
        config: LogConfig,
        *,
        codes: set[int],
        level: int | None,
        query: LogSearch,
        regex: re.Pattern[str] | None,
    ) -> None:
        self.index, self.config, self.codes, self.level = index, config, codes, level
        self.since = query.window.since.timestamp() if query.window.since else float("-inf")
        self.until = query.window.until.timestamp() if query.window.until else float("inf")
        self.keyword = query.keyword.casefold() if query.keyword else None
        self.regex = regex
        self.needle, self.lowered = _needle(query.keyword, index)

    def _keeps(self, i: int) -> bool:
        index = self.index
        return (
            self.since <= index.stamps[i] <= self.until
            and (self.level is None or index.levels[i] == self.level)
            and index.services[i] in self.codes
        )

    def entries(self, order: int, blocks: list[Block]) -> Iterator[_Entry]:
        index = self.index
        if self.keyword is None and self.regex is None:
            for block in blocks:
                for i in range(block.first, block.end):
                    if self._keeps(i):
                        yield (index.stamps[i], order, i, None)
            return
        with open_member(index.member.path, index.compressed) as handle:
            for block in blocks:
                data = index.read_block(handle, block)
                for i in self._candidates(block, data.data):
                    if not self._keeps(i):
                        continue
                    event = parse_event(index, *data.event(i), self.config)
                    if event is not None and self._matches(event):
                        yield (index.stamps[i], order, i, event)

    def _candidates(self, block: Block, data: bytes) -> Iterator[int]:
        if self.needle is None:
            yield from range(block.first, block.end)
            return
        hay = data.lower() if self.lowered else data
        starts = self.index.starts
        pos = hay.find(self.needle)
        while pos != -1:
            i = bisect_right(starts, pos, block.first, block.end) - 1  # the event holding the hit
            yield i
            if i + 1 >= block.end:
                return
            pos = hay.find(self.needle, starts[i + 1])

    def _matches(self, event: LogEvent) -> bool:
        text = event.search_text()
        if self.keyword is not None and self.keyword not in text.casefold():
            return False
        return self.regex is None or self.regex.search(text) is not None


def _needle(keyword: str | None, index: FileIndex) -> tuple[bytes | None, bool]:
    """The bytes to find before parsing, and whether the block must be ASCII-lowercased first;
    None when raw bytes could miss a match (escapes, or a line split by the container runtime)."""
    if keyword is None or index.joined or (index.composed and ("=" in keyword or " " in keyword)):
        return None, False
    fmt = index.file_format
    escaping = fmt.container == "docker" or fmt.name in ("json", "logfmt")
    if escaping and (_ESCAPED_BY_WRITERS.search(keyword) or (index.escaped and not keyword.isascii())):
        return None, False
    if keyword.isascii():
        return keyword.lower().encode(), True
    if keyword.lower() == keyword.upper():  # no letter case (Chinese): its UTF-8 bytes as they are
        return keyword.encode(), False
    return None, False


def parse_event(index: FileIndex, data: bytes, line: int, offset: int, config: LogConfig) -> LogEvent | None:
    parser = StreamParser(index.member.rel, index.file_format)
    lines = raw_lines(io.BytesIO(data), line, offset)
    for item in parser.run(lines):
        if isinstance(item, Draft):
            return finish(item, index.source, index.file_format, index.member.rel, config)
    return None


def _materialize(entries: list[_Entry], indexes: list[FileIndex], config: LogConfig) -> list[LogEvent]:
    """Events the index alone chose are parsed now, one open per file, in file order."""
    wanted: dict[int, list[int]] = {}
    for _, order, i, event in entries:
        if event is None:
            wanted.setdefault(order, []).append(i)
    loaded: dict[tuple[int, int], LogEvent] = {}
    for order, numbers in wanted.items():
        index = indexes[order]
        data: BlockBytes | None = None
        with open_member(index.member.path, index.compressed) as handle:
            for i in sorted(numbers):
                block = index.block_of(i)
                if data is None or data.block is not block:
                    data = index.read_block(handle, block)
                event = parse_event(index, *data.event(i), config)
                if event is not None:
                    loaded[(order, i)] = event
    out = []
    for _, order, i, event in entries:
        found = event if event is not None else loaded.get((order, i))
        if found is not None:
            out.append(found)
    return out


def search(
    config: LogConfig | Path,
    *,
    service: str | None = None,
    level: str | None = None,
    keyword: str | None = None,
    regex: str | None = None,
    window: TimeWindow = _UNBOUNDED,
    limit: int = 20,
) -> SearchResult:
    """One-off query (a new reader each call: a tool keeps one LogReader to keep its indexes)."""
    reader = LogReader(config if isinstance(config, LogConfig) else LogConfig(root=config))
    return reader.search(LogSearch(service, level, keyword, regex, window, limit))
