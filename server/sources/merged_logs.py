"""Log sources searched as one (the SourceSet's log capability): the file tree and a ClickHouse
table, say, each holding some services.

Both are asked every question (a service one of them does not hold finds nothing there, cheaply:
the file index skips files of other services, ClickHouse prunes by its sort key) and the answers are
merged: lines newest first up to the limit with the totals added, templates joined by their text
with counts added and spans widened. A source whose store fails fails the call, naming itself: half
an answer is never passed off as the whole one. A source that answers it cannot check the question
(the file source, for a service it holds no file of) is left out and named under `left_out`. The
sources' facts are joined: counts added, tables merged, the rest as the first source said it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from evigate.server.queries.types import JSON, LogsQuery, Page, PatternsQuery, ToolError
from evigate.server.sources.http import SourceError
from evigate.server.sources.logs.events import LEVELS
from evigate.server.sources.logs.patterns import MAX_SEVERE

# Each source is asked for this many templates at least, so a template that is second in one
# source and third in the other is still counted from both.
MIN_TEMPLATES = 50


class NamedLogs(Protocol):
    """A log source (ports.LogSource) with its name (ports.Source)."""

    @property
    def name(self) -> str: ...

    async def query_logs(self, query: LogsQuery) -> Page: ...

    async def summarize_logs(self, query: PatternsQuery) -> Page: ...


def _facts(pages: Sequence[Page]) -> JSON:
    """The sources' facts as one: numbers added (skipped_lines, events), tables merged (parsers), the
    rest as the first source that has it said it (queried_window, pushed_down)."""
    facts: JSON = {}
    for page in pages:
        for key, value in page.extra.items():
            if isinstance(value, int | float) and isinstance(facts.get(key, 0), int | float):
                facts[key] = facts.get(key, 0) + value
            elif isinstance(value, dict) and isinstance(facts.get(key, {}), dict):
                facts[key] = {**facts.get(key, {}), **value}
            elif isinstance(value, list) and isinstance(facts.get(key, []), list):
                facts[key] = [*facts.get(key, []), *value]
            else:
                facts.setdefault(key, value)
    return facts


class MergedLogs:
    def __init__(self, sources: Sequence[NamedLogs]) -> None:
        self.sources = list(sources)
        self.name = "+".join(source.name for source in self.sources)

    async def _ask(self, ask: Callable[[NamedLogs], Awaitable[Page]]) -> tuple[list[Page], JSON]:
        """Every source's page. A source that could not reach its store (SourceError) fails the
        call; one that answered it cannot check this question (a service it does not hold) is left
        out, named under `left_out`, as long as another source answered."""
        answers = await asyncio.gather(*(ask(source) for source in self.sources), return_exceptions=True)
        pages, left_out = [], {}
        for source, answer in zip(self.sources, answers, strict=True):
            if isinstance(answer, SourceError) or not isinstance(answer, Page | ToolError):
                raise answer
            if isinstance(answer, ToolError):
                left_out[source.name] = str(answer)
            else:
                pages.append(answer)
        if not pages:
            raise next(a for a in answers if isinstance(a, BaseException))
        return pages, {"left_out": left_out} if left_out else {}

    async def query_logs(self, q: LogsQuery) -> Page:
        pages, notes = await self._ask(lambda source: source.query_logs(q))
        items = [item for page in pages for item in page.items]
        if not q.query:  # by time; relevance mode keeps each source's ranking, in the set's order
            items.sort(key=lambda item: str(item.get("timestamp", "")), reverse=True)  # stable
        total = sum(page.total for page in pages)
        return Page(items[: q.limit], total, {**_facts(pages), **notes})

    async def summarize_logs(self, q: PatternsQuery) -> Page:
        wide = replace(q, limit=max(q.limit, MIN_TEMPLATES))
        pages, notes = await self._ask(lambda source: source.summarize_logs(wide))
        if not all("template" in item for page in pages for item in page.items):  # not templates: in order
            listed = [item for page in pages for item in page.items]
            return Page(listed[: q.limit], sum(page.total for page in pages), {**_facts(pages), **notes})
        joined: dict[str, dict[str, Any]] = {}
        for page in pages:
            for item in page.items:
                _join(joined.setdefault(item["template"], {**item, "count": 0}), item)
        never = datetime.max.isoformat()
        items = sorted(
            joined.values(),
            key=lambda p: (-p["count"], p["first"] if p["first"] != "-" else never, p["template"]),
        )
        facts = {**_facts(pages), **notes}
        # As one source's summary: the most frequent, then rare severe ones beyond them, rarest first.
        severe = sorted(
            (p for p in items[q.limit :] if p.get("severe")), key=lambda p: (p["count"], p["first"])
        )
        return Page([*items[: q.limit], *severe[:MAX_SEVERE]], len(items), facts)


def _join(into: dict[str, Any], item: dict[str, Any]) -> None:
    if item["count"] > into["count"]:
        into["example"] = item["example"]
    into["count"] += item["count"]
    times = [t for t in (into["first"], item["first"]) if t != "-"]
    into["first"] = min(times) if times else "-"
    times = [t for t in (into["last"], item["last"]) if t != "-"]
    into["last"] = max(times) if times else "-"
    levels = set(into["levels"]) | set(item["levels"])
    severity = {level: rank for rank, level in enumerate(reversed(LEVELS))}  # most severe first
    into["levels"] = sorted(levels, key=lambda level: (severity.get(level, len(LEVELS)), level))
