"""query_logs and summarize_logs over a log tree, read by server.sources.logs (docs/design.md §6.1).

One LogReader per tree keeps its indexes across queries. The reader is synchronous (files, gzip,
regexes): the files backend runs these methods in a worker thread. Bad lines never fail a query;
each result says how many lines of the files it read were skipped, where the first few are, and
which parser read each file. Only "nothing readable" is a ToolError (raised by the reader).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evigate.server.queries.types import JSON, LogsQuery, Page, PatternsQuery
from evigate.server.sources.logs import items as log_items
from evigate.server.sources.logs import patterns as log_patterns
from evigate.server.sources.logs.config import LogConfig
from evigate.server.sources.logs.events import LEVELS, SkipReport
from evigate.server.sources.logs.search import LogReader, LogSearch, SearchResult

# summarize_logs mines at most this many events (the newest); the result says how many it mined.
MAX_MINED = 200_000


class LogFiles:
    def __init__(self, config: LogConfig, reader: LogReader | None = None) -> None:
        self.config = config
        self._reader = reader  # None: made on first use (a benchmark shares its own)

    @property
    def root(self) -> Path:
        return self.config.root

    def reader(self) -> LogReader:
        if self._reader is None:
            self._reader = LogReader(self.config)
        return self._reader

    def _search(self, **query: Any) -> SearchResult:
        return self.reader().search(LogSearch(**query))

    def services(self) -> list[str]:
        """The services the log tree holds: the records' own service fields and the names the
        layout gives its files (for the service catalog)."""
        return sorted(self.reader().services())

    def query(self, q: LogsQuery) -> Page:
        result = self._search(
            service=q.service,
            level=q.level,
            keyword=q.keyword,
            regex=q.pattern,
            window=q.window,
            limit=q.limit,
        )
        items = [log_items.log_item(event) for event in result.events]
        return Page(items, result.total, _read_report([result]))

    def summarize(self, q: PatternsQuery) -> Page:
        """The level is the lowest severity kept: one search per level at or above it."""
        levels = LEVELS[LEVELS.index(q.level) :] if q.level in LEVELS else (q.level,)
        mine = {"service": q.service, "window": q.window, "limit": MAX_MINED, "parse_all": True, "bare": True}
        results = [self._search(level=level, **mine) for level in levels]
        events = [event for result in results for event in result.events]
        if len(events) > MAX_MINED:
            events = sorted(events, key=lambda e: e.timestamp, reverse=True)[:MAX_MINED]
        patterns = log_patterns.summarize(events)
        items = [log_items.pattern_item(p) for p in patterns[: q.limit]]
        extra = {
            "events": sum(r.total for r in results),
            "mined": len(events),
            **_read_report(results),
        }
        return Page(items, len(patterns), extra)


def _read_report(results: list[SearchResult]) -> JSON:
    """skipped_lines / skipped_at of the files the queries read, and the parser of each of them.
    Every search of one call reads the same files' skip counts: they are counted once per file."""
    report = SkipReport()
    parsers: dict[str, str] = {}
    for result in results:
        parsers.update(result.parsers)
    report.merge(results[0].skipped)
    return {**log_items.skipped_summary(report), "parsers": parsers}
