"""Two log sources searched as one: the file tree and a ClickHouse table, each holding some services.

Both are asked every question (a service one of them does not hold finds nothing there, cheaply:
the file index skips files of other services, ClickHouse prunes by its sort key) and the answers are
merged: lines newest first up to the limit with the totals added, templates joined by their text
with counts added and spans widened. A source that fails fails the call, naming itself: half an
answer is never passed off as the whole one. Each source's own facts are kept under `sources`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from evigate.server.queries.types import JSON, LogsQuery, Page, PatternsQuery
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.logs.patterns import ordered_levels

# Each source is asked for this many templates at least, so a template that is second in one
# source and third in the other is still counted from both.
MIN_TEMPLATES = 50


class LogAnswers(Protocol):
    name: str

    async def query(self, q: LogsQuery) -> Page: ...

    async def summarize(self, q: PatternsQuery) -> Page: ...


def _facts(names: Sequence[str], pages: Sequence[Page]) -> JSON:
    merged: JSON = {"sources": {name: page.extra for name, page in zip(names, pages, strict=True)}}
    for page in pages:  # the file source's unreadable lines stay where skipped_note reads them
        for key in ("skipped_lines", "skipped_at", "parsers"):
            if key in page.extra:
                merged[key] = page.extra[key]
    return merged


class LogStore(LogAnswers, Protocol):
    """A log store beside the files: it also names its services and reports its health."""

    async def services(self) -> list[str]: ...

    async def health(self) -> SourceHealth: ...

    async def aclose(self) -> None: ...


class SyncLogs(Protocol):
    def query(self, q: LogsQuery) -> Page: ...

    def summarize(self, q: PatternsQuery) -> Page: ...


class ThreadedLogs:
    """A synchronous log source (the file tree) asked in a worker thread."""

    def __init__(self, name: str, logs: SyncLogs) -> None:
        self.name, self.logs = name, logs

    async def query(self, q: LogsQuery) -> Page:
        return await asyncio.to_thread(self.logs.query, q)

    async def summarize(self, q: PatternsQuery) -> Page:
        return await asyncio.to_thread(self.logs.summarize, q)


class MergedLogs:
    def __init__(self, sources: Sequence[LogAnswers]) -> None:
        self.sources = list(sources)
        self.name = "+".join(source.name for source in self.sources)

    async def query(self, q: LogsQuery) -> Page:
        pages = await asyncio.gather(*(source.query(q) for source in self.sources))
        items = [item for page in pages for item in page.items]
        items.sort(
            key=lambda item: str(item.get("timestamp", "")), reverse=True
        )  # stable: ties keep source order
        total = sum(page.total for page in pages)
        return Page(items[: q.limit], total, _facts([s.name for s in self.sources], pages))

    async def summarize(self, q: PatternsQuery) -> Page:
        wide = replace(q, limit=max(q.limit, MIN_TEMPLATES))
        pages = await asyncio.gather(*(source.summarize(wide) for source in self.sources))
        joined: dict[str, dict[str, Any]] = {}
        for page in pages:
            for item in page.items:
                _join(joined.setdefault(item["template"], {**item, "count": 0}), item)
        never = datetime.max.isoformat()
        items = sorted(
            joined.values(),
            key=lambda p: (-p["count"], p["first"] if p["first"] != "-" else never, p["template"]),
        )
        facts = _facts([s.name for s in self.sources], pages)
        facts["events"] = sum(int(page.extra.get("events", 0)) for page in pages)
        return Page(items[: q.limit], len(items), facts)


def _join(into: dict[str, Any], item: dict[str, Any]) -> None:
    if item["count"] > into["count"]:
        into["example"] = item["example"]
    into["count"] += item["count"]
    times = [t for t in (into["first"], item["first"]) if t != "-"]
    into["first"] = min(times) if times else "-"
    times = [t for t in (into["last"], item["last"]) if t != "-"]
    into["last"] = max(times) if times else "-"
    into["levels"] = list(ordered_levels(set(into["levels"]) | set(item["levels"])))
