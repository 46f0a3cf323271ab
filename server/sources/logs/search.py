"""The query over a log tree: service, level, keyword, regex and time window, newest first.

A file's index is read back from the store, or built by the background build, or by the first
query that needs it (and again when the file changes); a keyword query over a file not indexed
yet scans its bytes instead (scan.py). A query skips files and blocks whose services, levels or
time range its filters exclude; a keyword is searched as bytes in the blocks it must read, so only
events containing it are parsed; without a text filter the index alone counts the matches and only
the returned events are parsed. Whichever way a file is read, the same events come back in the
same order: by time, then file, then place in the file."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from evigate.server.queries.types import TimeWindow, ToolError

from . import scan
from .batch import LEVEL_CODES
from .events import SkippedLine, SkipReport, normalize_level
from .file_index import FileIndex
from .finder import Finder
from .log_config import LogConfig
from .query import (
    Filters,
    Found,
    IndexedFile,
    LogSearch,
    SearchResult,
    block_wanted,
    describe,
    materialize,
    overlaps,
    wanted_services,
)
from .store import IndexStore
from .tree import Entry, LogTree, Progress

_UNBOUNDED = TimeWindow(None, None)
__all__ = ["LogReader", "LogSearch", "SearchResult", "Snapshot", "search"]


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
        if store is None and config.index_file is not None:
            store = IndexStore(config.index_file, config)
        self.tree = LogTree(config, store)
        # A static tree's files that may hold a service (lowercased), decided once per service.
        self._holding: dict[str, tuple[list[Entry], bool]] = {}

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
        with self.tree.querying():
            files = self._files(service, None)
        return Snapshot([index for _, index in files.indexed], files.unreadable, files.complete)

    def holds(self, service: str) -> bool:
        """Whether any file is the service's by its place in the tree or holds a record naming it."""
        wanted = service.lower()
        files = self._files(service, None)
        return any(entry_service.lower() == wanted for entry_service, _ in files.unreadable) or any(
            index.source.service.lower() == wanted or index.service_codes(service)
            for _, index in files.indexed
        )

    def services(self) -> set[str]:
        """The services the tree holds: the records' own service fields and the names the layout
        gives its files. While the background build runs, only the indexed files' records count
        (this never waits for the build); with no build running, every file is indexed now."""
        if self.progress.state in ("idle", "ready"):
            indexes = self.refresh().indexes
            return {name for index in indexes for name in index.service_names if name} | {
                index.source.service for index in indexes if index.source.service
            }
        names = set()
        for entry in self.tree.files():
            names.add(entry.source.service)
            index = self.tree.ready(entry)
            names.update(index.service_names if index is not None else ())
        return {name for name in names if name}

    def namespaces(self) -> dict[str, set[str]]:
        """The Kubernetes namespaces the tree's layout names, each with the workloads of its pods
        (read from the paths alone: nothing is indexed for it)."""
        out: dict[str, set[str]] = {}
        for entry in self.tree.files():
            namespace = entry.source.fields.get("namespace")
            if namespace and entry.source.service:
                out.setdefault(namespace, set()).add(entry.source.service)
        return out

    def _entries(self, service: str | None) -> tuple[list[Entry], bool]:
        """The files a query about the service looks at, and whether that is every file. A static
        tree's files that cannot hold the service (their place names another and neither their
        index nor their bytes name it) are left out once and for all, not passed over by every
        query (each summary runs a dozen)."""
        entries = self.tree.files()
        if service is None or not self.config.static:
            return entries, True
        wanted = service.lower()
        if wanted not in self._holding:
            kept = [entry for entry in entries if self._may_hold(entry, service)]
            self._holding[wanted] = (kept, len(kept) == len(entries))
        return self._holding[wanted]

    def _may_hold(self, entry: Entry, service: str) -> bool:
        if entry.identity is None:
            return True  # unreadable: reported to the queries about the service its place names
        try:
            index = self.tree.ready(entry)
        except OSError:
            return True
        if index is not None:
            return wanted_services(index, service) is not None
        return self.tree.may_hold(entry, service)

    def _files(self, service: str | None, keyword: str | None) -> _Files:
        files = _Files()
        tree = self.tree
        entries, files.complete = self._entries(service)
        for entry in entries:
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
        with self.tree.querying():
            return self._search(query)

    def _search(self, query: LogSearch) -> SearchResult:
        files = self._files(query.service, query.keyword or None)
        indexes = [index for _, index in files.indexed]
        if files.complete and not files.scans and not any(index.count for index in indexes):
            everything = SkipReport(keep=self.config.skipped_keep)
            for _, line in files.unreadable:
                everything.add(line)
            raise ToolError(f"no readable log line under {self.config.root}: {describe(indexes, everything)}")
        wanted = query.service.lower() if query.service is not None else None
        unreadable = SkipReport(keep=self.config.skipped_keep)
        for service, line in files.unreadable:
            if wanted is None or service.lower() == wanted:
                unreadable.add(line)
        level_code = _level_code(query.level)
        regex = re.compile(query.regex) if query.regex else None
        skipped = SkipReport(keep=self.config.skipped_keep)
        skipped.merge(unreadable)
        found = Found(query.limit)
        selected: list[FileIndex] = []
        consulted: dict[str, str] = {}
        self._scan(files, _ScanQuery(query, level_code, regex), found, consulted)
        by_order = dict(files.indexed)
        finders: dict[tuple[bytes, bool], Finder] = {}
        for order, index in files.indexed:
            codes = wanted_services(index, query.service)
            if codes is None:
                continue
            selected.append(index)
            if not overlaps(index.since, index.until, query.window) and index.count:
                continue
            skipped.merge(index.skipped)
            blocks = [b for b in index.blocks if block_wanted(b, codes, level_code, query.window)]
            if not blocks:
                continue
            consulted[index.member.rel] = index.file_format.parser
            reading = IndexedFile(
                index, self.config, codes=codes, level=level_code, query=query, regex=regex, finders=finders
            )
            for hit in reading.entries(order, blocks):
                found.add(hit)
        # A scanned file holds events and may hold the service's (its bytes name it).
        readable = bool(files.scans) or any(index.count for index in selected)
        if (selected or unreadable.count) and not readable and skipped.count:
            raise ToolError(f"no readable log line for this query: {describe(selected, unreadable)}")
        events = materialize(found.newest(), by_order, self.config)
        return SearchResult(events, found.total, skipped, list(consulted), consulted)

    def _scan(self, files: _Files, asked: _ScanQuery, found: Found, consulted: dict[str, str]) -> None:
        """The hits of the files scanned (found, and held, first: a file whose scan cannot finish is
        indexed instead and joins files.indexed)."""
        for plan in files.scans:
            filters = _scan_filters(plan, asked.query, asked.level, asked.regex)
            try:
                hits = list(scan.hits(plan, filters.keeps))
            except scan.ScanError:
                index = self.tree.index(plan.entry)
                if index is not None:
                    files.indexed.append((plan.entry.order, index))
                continue
            if hits:  # which of the files it read hold the service is known only where it matched
                consulted[plan.entry.member.rel] = plan.parsers
            for hit in hits:
                found.add(hit)


@dataclass(frozen=True)
class _ScanQuery:
    query: LogSearch
    level: int | None
    regex: re.Pattern[str] | None


def _level_code(level: str | None) -> int | None:
    if level is None:
        return None
    return LEVEL_CODES.get(normalize_level(level) or level.upper(), 0)


def _scan_filters(
    plan: scan.Scan, query: LogSearch, level: int | None, regex: re.Pattern[str] | None
) -> Filters:
    """A scanned file whose place names the service keeps every record's service (wanted_services)."""
    named = query.service is not None and plan.entry.source.service.lower() == query.service.lower()
    return Filters(replace(query, service=None) if named else query, level, regex)


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
