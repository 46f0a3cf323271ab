"""query_logs and summarize_logs over a log tree, read by server.sources.logs (docs/design.md §6.1).

One LogReader per tree keeps its indexes across queries. The reader is synchronous (files, gzip,
regexes): the files backend runs these methods in a worker thread. Bad lines never fail a query;
each result says how many lines of the files it read were skipped, where the first few are, and
which parser read each file. Only "nothing readable" is a ToolError (raised by the reader).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evigate.server.queries.types import JSON, LogsQuery, Page, PatternsQuery, ToolError
from evigate.server.sources.logs import items as log_items
from evigate.server.sources.logs import patterns as log_patterns
from evigate.server.sources.logs import relevance as log_relevance
from evigate.server.sources.logs import severe as log_severe
from evigate.server.sources.logs.events import LEVELS, SkipReport, at_or_above
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.logs.search import LogReader, LogSearch, SearchResult

# summarize_logs mines at most this many events (the newest); the result says how many it mined.
MAX_MINED = 200_000
# Services a could-not-check message names.
MAX_NAMED = 12
# Relevance mode ranks the templates of at most this many events (the newest).
MAX_RANKED = 5_000
# Severe events under the summary's level, kept per severe word searched (the newest).
SEVERE_PER_WORD = 50
# Templates whose example event is read again whole for its cause (exception chain, error field).
MAX_CAUSES = 6
CAUSE_LEVELS = frozenset({"WARN", "ERROR", "FATAL"})


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
        result = self.reader().search(LogSearch(**query))
        service = query.get("service")
        if not result.total and service is not None and not self.reader().holds(service):
            raise ToolError(f"no logs of {service} are available: {self._held()}")
        return result

    def _held(self) -> str:
        """What the tree does hold, for a could-not-check message."""
        names = sorted(self.reader().services())
        shown = ", ".join(names[:MAX_NAMED])
        more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
        return f"no file or record under the log root names it (it holds {shown}{more})"

    def services(self) -> list[str]:
        """The services the log tree holds: the records' own service fields and the names the
        layout gives its files (for the service catalog)."""
        return sorted(self.reader().services())

    def namespaces(self) -> dict[str, set[str]]:
        """The namespaces the tree's Kubernetes layout names, each with its workloads."""
        return self.reader().namespaces()

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

    def candidates(self, q: LogsQuery) -> Candidates:
        """Relevance mode's first half: the newest MAX_RANKED events the exact filters keep (chosen
        by the index, only those parsed), grouped into templates, each with the text it is ranked
        by (template, example, exception, logger)."""
        result = self._search(
            service=q.service,
            level=q.level,
            keyword=q.keyword,
            regex=q.pattern,
            window=q.window,
            limit=MAX_RANKED,
        )
        grouping = log_patterns.group_messages([e.message for e in result.events])
        newest: dict[int, Any] = {}
        counts: dict[int, int] = {}
        for event, group in zip(result.events, grouping.group_of, strict=True):
            newest.setdefault(group, event)  # the events come newest first
            counts[group] = counts.get(group, 0) + 1
        groups = sorted(newest)
        documents = [_document(grouping.templates[g], newest[g]) for g in groups]
        return Candidates([newest[g] for g in groups], [counts[g] for g in groups], documents, result)

    def ranked(self, found: Candidates, question: str, dense: Any = None, limit: int = 20) -> Page:
        """Relevance mode's second half: the newest event of each template the question ranks,
        best first, with how many lines of the window share its template."""
        ranked = log_relevance.rank(question, found.documents, dense)
        items = []
        for at in ranked.order[:limit]:
            item = log_items.log_item(found.events[at])
            item["lines_like_this"] = str(found.counts[at])
            items.append(item)
        extra = {"ranked_templates": len(found.documents), "searched_events": found.result.total}
        return Page(items, len(ranked.order), {**extra, **_read_report([found.result])})

    def summarize(self, q: PatternsQuery) -> Page:
        """The level is the lowest severity kept (a search at a level keeps those above it). The
        events are mined lowest level first, newest first, unless there were more than MAX_MINED:
        then the newest. Rare severe events below that level (a restart or a reload logged at INFO)
        are searched by their words in the service's files (a summary of the whole tree keeps those
        at or above its level)."""
        levels = at_or_above(q.level) if q.level is not None else ()
        mine = {"service": q.service, "window": q.window, "limit": MAX_MINED, "parse_all": True, "bare": True}
        result = self._search(level=q.level, **mine)
        events = list(result.events)
        if result.total <= MAX_MINED:
            rank = {level: number for number, level in enumerate(levels)}
            events.sort(key=lambda e: rank.get(e.level, len(rank)))  # stable: newest first in each
        below = [level for level in LEVELS if level not in levels]  # every level when none is asked
        if below and q.service is not None:  # one byte search per severe word: bounded to a service
            events.extend(self._severe_below(q, set(below)))
        span = (q.window.since, q.window.until)
        summary = log_patterns.summary(events, limit=q.limit, span=span, at=q.changed_since)
        items = [log_items.pattern_item(p) for p in self._with_causes(q, summary.patterns)]
        extra = {"events": result.total, "mined": len(events), **_read_report([result])}
        return Page(items, summary.total, extra)

    def _with_causes(self, q: PatternsQuery, patterns: list[Any]) -> list[Any]:
        """Mining reads each event's message only; the first MAX_CAUSES templates at WARN and above
        (or severe) get their example's whole event read again, so the ref says why it failed: its
        exception chain or its record's error field (`err`, `error`, …)."""
        out, looked = [], 0
        for pattern in patterns:
            severe = pattern.severe or any(level in CAUSE_LEVELS for level in pattern.levels)
            if looked < MAX_CAUSES and severe and pattern.example:
                looked += 1
                found = self.reader().search(
                    LogSearch(service=q.service, keyword=pattern.example, window=q.window, limit=1)
                )
                cause = log_items.cause_of(found.events[0]) if found.events else ""
                out.append(replace(pattern, cause=cause) if cause else pattern)
                continue
            out.append(pattern)
        return out

    def _severe_below(self, q: PatternsQuery, levels: set[str]) -> list[Any]:
        """Events under the asked level that hold a severe word and are severe by it."""
        seen: dict[tuple[str, int], Any] = {}
        for word in log_severe.KEYWORDS:
            found = self._search(service=q.service, keyword=word, window=q.window, limit=SEVERE_PER_WORD)
            for event in found.events:
                if event.level in levels and log_severe.kind(event.message, event.level):
                    seen.setdefault((event.file, event.line), event)
        return list(seen.values())


@dataclass(frozen=True)
class Candidates:
    events: list[Any]  # the newest event of each template
    counts: list[int]  # how many events each template holds
    documents: list[str]  # what each is ranked by
    result: SearchResult


def _document(template: str, event: Any) -> str:
    parts = [template, event.message, event.chain_text(), event.fields.get("logger", "")]
    return " ".join(part for part in parts if part)


def _read_report(results: list[SearchResult]) -> JSON:
    """skipped_lines / skipped_at of the files the queries read, and the parser of each of them.
    Every search of one call reads the same files' skip counts: they are counted once per file."""
    report = SkipReport()
    parsers: dict[str, str] = {}
    for result in results:
        parsers.update(result.parsers)
    report.merge(results[0].skipped)
    return {**log_items.skipped_summary(report), "parsers": parsers}
