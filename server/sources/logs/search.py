"""The query over a log tree: service, level, keyword, regex and time window, newest first.

A file's index is read back from the store, or built by the background build, or by the first
query that needs it (and again when the file changes); a keyword query over a file not indexed
yet scans its bytes instead (scan.py). A query skips files and blocks whose services, levels or
time range its filters exclude; a keyword is searched as bytes in the blocks it must read, so only
events containing it are parsed; without a text filter the index alone counts the matches and only
the returned events are parsed. Whichever way a file is read, the same events come back in the
same order: by time, then file, then place in the file."""

from __future__ import annotations

import heapq
import io
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evigate.server.tools.backend import TimeWindow, ToolError

from . import scan
from .batch import LEVEL_CODES
from .config import LogConfig
from .events import LogEvent, SkippedLine, SkipReport, normalize_level
from .index import Block, BlockBytes, FileIndex
from .reader import (
    Draft,
    EventParser,
    StreamParser,
    event_level,
    event_service,
    finish,
    open_member,
    raw_lines,
)
from .store import IndexStore
from .tree import LogTree, Progress

_UNBOUNDED = TimeWindow(None, None)


@dataclass(frozen=True)
class LogSearch:
    service: str | None = None
    level: str | None = None
    keyword: str | None = None  # case-insensitive substring of message, fields or stack trace
    regex: str | None = None  # re.search over the same text
    window: TimeWindow = _UNBOUNDED
    limit: int = 20
    # Parse the matching events while scanning, a block at a time, not only the `limit` returned
    # one by one afterwards: for a caller that wants most of them (summarize_logs).
    parse_all: bool = False
    # With parse_all: events carry time, level, service and message only (no fields, no stack
    # trace): all that mining templates reads, at a fraction of the cost per event.
    bare: bool = False


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


@dataclass
class _Files:
    """What a query reads: files by their index (with their order), files it scans, files it
    cannot open."""

    indexed: list[tuple[int, FileIndex]] = field(default_factory=list)
    scans: list[scan.Scan] = field(default_factory=list)
    unreadable: list[tuple[str, SkippedLine]] = field(default_factory=list)
    complete: bool = True  # every file that may matter is indexed (or unreadable)


class LogReader:
    """Holds the indexes of one log tree across queries (and on disk, with a store); safe to share
    between threads. A keyword query over a file not indexed yet scans it (scan.py); any other
    query indexes the files it needs first."""

    def __init__(self, config: LogConfig, store: IndexStore | None = None) -> None:
        self.config = config
        self.tree = LogTree(config, store)

    @property
    def progress(self) -> Progress:
        return self.tree.progress

    def build_all(self, stop: Callable[[], bool] = lambda: False) -> Progress:
        """Indexes the whole tree (reading back what the store holds); see LogTree.build_all."""
        return self.tree.build_all(stop)

    def refresh(self, service: str | None = None) -> Snapshot:
        """The current index of every file that may hold the service (every file without one).

        A file not indexed yet whose place in the tree names another service is indexed only if
        its bytes contain the service's name (a scan at grep speed, remembered per file version):
        the first query about one service does not parse the whole tree."""
        files = self._files(service, None)
        return Snapshot([index for _, index in files.indexed], files.unreadable, files.complete)

    def _files(self, service: str | None, keyword: str | None) -> _Files:
        files = _Files()
        tree = self.tree
        for entry in tree.files():
            if entry.identity is None:
                files.unreadable.append(
                    (entry.source.service, SkippedLine(entry.member.rel, 0, f"unreadable: {entry.error}"))
                )
                continue
            try:
                index = tree.ready(entry)
                if index is None:
                    if service is not None and not tree.may_hold(entry, service):
                        files.complete = False
                        continue
                    if keyword is not None and (found := scan.plan(entry, self.config, keyword)) is not None:
                        files.scans.append(found)
                        continue
                    index = tree.index(entry)
            except OSError as exc:
                why = f"unreadable: {exc.strerror or exc}"
                files.unreadable.append((entry.source.service, SkippedLine(entry.member.rel, 0, why)))
                continue
            if index is not None:
                files.indexed.append((entry.order, index))
        return files

    def search(self, query: LogSearch) -> SearchResult:
        files = self._files(query.service, query.keyword or None)
        indexes = [index for _, index in files.indexed]
        if files.complete and not files.scans and not any(index.count for index in indexes):
            everything = SkipReport(keep=self.config.skipped_keep)
            for _, line in files.unreadable:
                everything.add(line)
            raise ToolError(
                f"no readable log line under {self.config.root}: {_describe(indexes, everything)}"
            )
        wanted = query.service.lower() if query.service is not None else None
        unreadable = SkipReport(keep=self.config.skipped_keep)
        for service, line in files.unreadable:
            if wanted is None or service.lower() == wanted:
                unreadable.add(line)
        level = None
        if query.level is not None:
            level = normalize_level(query.level) or query.level.upper()
        level_code = LEVEL_CODES.get(level, 0) if level is not None else None
        regex = re.compile(query.regex) if query.regex else None
        skipped = SkipReport(keep=self.config.skipped_keep)
        skipped.merge(unreadable)
        found = _Found(query.limit)
        selected: list[FileIndex] = []
        consulted: dict[str, str] = {}
        by_order = dict(files.indexed)
        for plan in files.scans:  # found (and held) first: one that cannot finish is indexed instead
            filters = _Filters(query, level_code, regex)
            try:
                hits = list(scan.hits(plan, filters.keeps))
            except scan.ScanError:
                index = self.tree.index(plan.entry)
                if index is not None:
                    files.indexed.append((plan.entry.order, index))
                    by_order[plan.entry.order] = index
                continue
            if hits:  # which of the files it read hold the service is known only where it matched
                consulted[plan.entry.member.rel] = plan.parsers
            for hit in hits:
                found.add(hit)
        for order, index in files.indexed:
            codes = _wanted_services(index, query.service)
            if codes is None:
                continue
            selected.append(index)
            if not _overlaps(index.since, index.until, query.window) and index.count:
                continue
            skipped.merge(index.skipped)
            blocks = [b for b in index.blocks if _block_wanted(b, codes, level_code, query.window)]
            if not blocks:
                continue
            consulted[index.member.rel] = index.file_format.parser
            reading = _Scan(index, self.config, codes=codes, level=level_code, query=query, regex=regex)
            for hit in reading.entries(order, blocks):
                found.add(hit)
        # A scanned file holds events and may hold the service's (its bytes name it).
        readable = bool(files.scans) or any(index.count for index in selected)
        if (selected or unreadable.count) and not readable and skipped.count:
            raise ToolError(f"no readable log line for this query: {_describe(selected, unreadable)}")
        events = _materialize(found.newest(), by_order, self.config)
        return SearchResult(events, found.total, skipped, list(consulted), consulted)


class _Found:
    """The newest `limit` hits of a query (by time, then file order, then place in the file) and
    how many there were in all: the same order whichever way a file was read."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self._heap: list[scan.Hit] = []

    def add(self, hit: scan.Hit) -> None:
        self.total += 1
        heap = self._heap
        if len(heap) < self.limit:
            heapq.heappush(heap, hit)
        elif heap and hit[:3] > heap[0][:3]:
            heapq.heapreplace(heap, hit)

    def newest(self) -> list[scan.Hit]:
        return sorted(self._heap, key=lambda hit: hit[:3], reverse=True)


class _Filters:
    """What a query asks of an event read whole (by the scan)."""

    def __init__(self, query: LogSearch, level: int | None, regex: re.Pattern[str] | None) -> None:
        self.since = query.window.since.timestamp() if query.window.since else float("-inf")
        self.until = query.window.until.timestamp() if query.window.until else float("inf")
        self.level, self.regex = level, regex
        self.service = query.service.lower() if query.service is not None else None
        self.keyword = query.keyword.casefold() if query.keyword else None

    def keeps(self, event: LogEvent) -> bool:
        return (
            self.since <= event.timestamp.timestamp() <= self.until
            and (self.level is None or LEVEL_CODES.get(event.level, 0) == self.level)
            and (self.service is None or event.service.lower() == self.service)
            and _text_matches(event, self.keyword, self.regex)
        )


def _text_matches(event: LogEvent, keyword: str | None, regex: re.Pattern[str] | None) -> bool:
    text = event.search_text()
    if keyword is not None and keyword not in text.casefold():
        return False
    return regex is None or regex.search(text) is not None


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
        self.needle, self.lowered = None, False
        if query.keyword:
            self.needle, self.lowered = scan.needle(
                query.keyword,
                index.file_format,
                joined=index.joined,
                composed=index.composed,
                escaped=index.escaped,
            )
        self.parse_all, self.bare = query.parse_all, query.bare
        self.parser = EventParser(index.source, index.member.rel, index.file_format, config)

    def _keeps(self, i: int) -> bool:
        index = self.index
        return (
            self.since <= index.stamps[i] <= self.until
            and (self.level is None or index.levels[i] == self.level)
            and index.services[i] in self.codes
        )

    def entries(self, order: int, blocks: list[Block]) -> Iterator[scan.Hit]:
        index = self.index
        if self.keyword is None and self.regex is None and self.parse_all:
            with open_member(index.member.path, index.compressed) as handle:
                for block in blocks:
                    for i, event in self._whole_block(index.read_block(handle, block)):
                        yield (index.stamps[i], order, block.start + index.starts[i], i, event)
            return
        if self.keyword is None and self.regex is None:
            for block in blocks:
                for i in range(block.first, block.end):
                    if self._keeps(i):
                        yield (index.stamps[i], order, block.start + index.starts[i], i, None)
            return
        with open_member(index.member.path, index.compressed) as handle:
            for block in blocks:
                data = index.read_block(handle, block)
                for i in self._candidates(block, data.data):
                    if not self._keeps(i):
                        continue
                    found = self.parser.event(*data.event(i))
                    if found is not None and _text_matches(found, self.keyword, self.regex):
                        yield (index.stamps[i], order, block.start + index.starts[i], i, found)

    def _whole_block(self, data: BlockBytes) -> Iterator[tuple[int, LogEvent]]:
        """The block's kept events, its bytes parsed in one pass: each draft is matched to its index
        entry by offset (a line the index skipped stays skipped)."""
        index, block = self.index, data.block
        kept = [i for i in range(block.first, block.end) if self._keeps(i)]
        if not kept:
            return
        if len(kept) * 4 < block.end - block.first:  # a few: parse just those
            for i in kept:
                event = self.parser.event(*data.event(i))
                if event is not None:
                    yield i, event
            return
        wanted = {block.start + index.starts[i]: i for i in kept}
        file_format = index.file_format.for_mining() if self.bare else index.file_format
        parser = StreamParser(index.member.rel, file_format)
        lines = raw_lines(io.BytesIO(data.data), index.lines[block.first], block.start)
        for item in parser.run(lines):
            if isinstance(item, Draft) and (at := wanted.get(item.offset)) is not None:
                yield at, self._event(item)

    def _event(self, draft: Draft) -> LogEvent:
        index, config = self.index, self.config
        if not self.bare:
            return finish(draft, index.source, index.file_format, index.member.rel, config)
        return LogEvent(
            draft.timestamp,
            event_level(draft.parsed, config),
            event_service(draft, index.source),
            draft.parsed.message,
            file=index.member.rel,
            line=draft.line,
            parser=index.file_format.parser,
        )

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


def _materialize(entries: list[scan.Hit], indexes: dict[int, FileIndex], config: LogConfig) -> list[LogEvent]:
    """Events the index alone chose are parsed now, one open per file, in file order."""
    wanted: dict[int, list[int]] = {}
    for _, order, _, i, event in entries:
        if event is None:
            wanted.setdefault(order, []).append(i)
    loaded: dict[tuple[int, int], LogEvent] = {}
    for order, numbers in wanted.items():
        index = indexes[order]
        parser = EventParser(index.source, index.member.rel, index.file_format, config)
        data: BlockBytes | None = None
        with open_member(index.member.path, index.compressed) as handle:
            for i in sorted(numbers):
                block = index.block_of(i)
                if data is None or data.block is not block:
                    data = index.read_block(handle, block)
                event = parser.event(*data.event(i))
                if event is not None:
                    loaded[(order, i)] = event
    out = []
    for _, order, _, i, event in entries:
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
