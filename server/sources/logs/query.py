"""What a log query asks and gets, and how one file answers it through its index: blocks its
filters exclude are skipped, a keyword is searched as bytes in the blocks it must read so that only
events containing it are parsed, and without a text filter the index alone counts the matches (only
the returned events are parsed, by `materialize`)."""

from __future__ import annotations

import heapq
import io
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from evigate.server.queries.types import TimeWindow

from . import scan
from .batch import LEVEL_CODES
from .event_parser import EventParser, Pending
from .events import LogEvent, SkipReport
from .file_index import Block, BlockBytes, FileIndex
from .finder import Finder
from .log_config import LogConfig
from .reader import (
    Draft,
    StreamParser,
    event_level,
    event_service,
    finish,
    open_member,
    raw_lines,
)

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


class Found:
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


class Filters:
    """What a query asks of an event read whole (by the scan)."""

    def __init__(self, query: LogSearch, level: int | None, regex: re.Pattern[str] | None) -> None:
        self.since = query.window.since.timestamp() if query.window.since else float("-inf")
        self.until = query.window.until.timestamp() if query.window.until else float("inf")
        self.level, self.regex = level, regex
        self.service = query.service.lower() if query.service is not None else None
        self.keyword = query.keyword.casefold() if query.keyword else None

    def keeps(self, event: Readable) -> bool:
        return (
            self.since <= event.timestamp.timestamp() <= self.until
            and (self.level is None or level_kept(LEVEL_CODES.get(event.level, 0), self.level))
            and (self.service is None or event.service.lower() == self.service)
            and text_matches(event, self.keyword, self.regex)
        )


class Readable(Protocol):
    """What filters read of an event: a LogEvent, or a Pending one (event_parser.py)."""

    @property
    def timestamp(self) -> datetime: ...

    @property
    def level(self) -> str: ...

    @property
    def service(self) -> str: ...

    def search_text(self) -> str: ...


def text_matches(event: Readable, keyword: str | None, regex: re.Pattern[str] | None) -> bool:
    text = event.search_text()
    if keyword is not None and keyword not in text.casefold():
        return False
    return regex is None or regex.search(text) is not None


def describe(indexes: list[FileIndex], unreadable: SkipReport) -> str:
    report = SkipReport()
    report.merge(unreadable)
    for index in indexes:
        report.merge(index.skipped)
    where = ", ".join(str(s) for s in report.first)
    return f"{report.count} lines skipped (first: {where})" if report.count else "no log events"


def wanted_services(index: FileIndex, service: str | None) -> set[int] | None:
    """The service codes a query keeps in this file (all of them without a service filter or when
    the file's place in the tree names the service), or None when the file holds nothing of that
    service. A file with no readable event belongs to the service its place names, so that its
    skipped lines are reported to that query."""
    if service is None or index.source.service.lower() == service.lower():
        # The file's place names the service (a pod's workload, a file stem): every record in it is
        # that service's, whatever service its own field names.
        return set(range(len(index.service_names)))
    codes = index.service_codes(service)
    if codes or (not index.count and index.source.service.lower() == service.lower()):
        return codes
    return None


def overlaps(since: float, until: float, window: TimeWindow) -> bool:
    return (window.since is None or until >= window.since.timestamp()) and (
        window.until is None or since <= window.until.timestamp()
    )


def level_kept(code: int, level: int) -> bool:
    """A level filter keeps its level and every more severe one (codes rise with severity); code 0,
    a configured level outside LEVELS, keeps only itself."""
    return code >= level if level else code == 0


def block_wanted(block: Block, codes: set[int], level: int | None, window: TimeWindow) -> bool:
    # the block's levels are a bitmask by code: any bit at or above the asked one (bit 0 alone for 0)
    if level is not None and not (block.levels >> level if level else block.levels & 1):
        return False
    return overlaps(block.since, block.until, window) and not codes.isdisjoint(block.services)


class IndexedFile:
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
        finders: dict[tuple[bytes, bool], Finder] | None = None,
    ) -> None:
        """`finders`: the keyword's matchers one search shares among its files (on one thread),
        by needle: a file's needle depends only on its format."""
        self.index, self.config, self.codes, self.level = index, config, codes, level
        self.since = query.window.since.timestamp() if query.window.since else float("-inf")
        self.until = query.window.until.timestamp() if query.window.until else float("inf")
        self.keyword = query.keyword.casefold() if query.keyword else None
        self.regex = regex
        self.finder: Finder | None = None
        if query.keyword:
            needle, lowered = scan.needle(
                query.keyword,
                index.file_format,
                joined=index.joined,
                composed=index.composed,
                escaped=index.escaped,
            )
            if needle is not None:
                shared = finders if finders is not None else {}
                self.finder = shared.get((needle, lowered))
                if self.finder is None:
                    self.finder = shared[(needle, lowered)] = Finder(needle, lowered)
        self.parse_all, self.bare = query.parse_all, query.bare
        self.parser = EventParser(index.source, index.member.rel, index.file_format, config)

    def _keeps(self, i: int) -> bool:
        index = self.index
        return (
            self.since <= index.stamps[i] <= self.until
            and (self.level is None or (index.levels[i] >= self.level if self.level else not index.levels[i]))
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
                    # read as far as the filters look: made whole only if the query returns it
                    found = self.parser.pending(*data.event(i))
                    if found is not None and text_matches(found, self.keyword, self.regex):
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
        if self.finder is None:
            yield from range(block.first, block.end)
            return
        starts = self.index.starts
        after = -1  # hits before the next event's start are in the event just yielded
        for pos in self.finder.starts(data):
            if pos < after:
                continue
            i = bisect_right(starts, pos, block.first, block.end) - 1  # the event holding the hit
            yield i
            if i + 1 >= block.end:
                return
            after = starts[i + 1]


def materialize(entries: list[scan.Hit], indexes: dict[int, FileIndex], config: LogConfig) -> list[LogEvent]:
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
        if isinstance(event, Pending):
            out.append(event.event())
            continue
        found = event if event is not None else loaded.get((order, i))
        if found is not None:
            out.append(found)
    return out
