"""SourceSet: every configured source, and for each capability the sources that fill it.

The set is the tools' backend (server.tools.backend.ToolBackend, by shape): query_metrics asks the
alert sources, query_logs and summarize_logs the log sources, lookup_knowledge the knowledge
sources, query_promql the first metric source. Two sources of one capability are asked as one:
their pages are joined in the set's order (items up to the query's limit, totals added), and
knowledge takes the best match level any source reached. The set also keeps the service catalog
its sources fill (services.py): each source's sightings and, through the one alert-sighting reader,
the names in the alerts of every alert source over several servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from evigate.rules.enums import MatchLevel
from evigate.server.queries.types import (
    KnowledgeHits,
    KnowledgeQuery,
    LogsQuery,
    MetricsQuery,
    Page,
    PatternsQuery,
    PromQLQuery,
    SeriesAnswer,
    ToolError,
)

from .merged_logs import MergedLogs, NamedLogs
from .ports import (
    NO_METRIC_SOURCE,
    AlertSource,
    ClusterSource,
    KnowledgeSource,
    LogSource,
    MetricSource,
    Source,
)
from .services import ServiceCatalog, SightingReader, alert_sightings
from .signals import SignalCatalog

_LEVELS = (MatchLevel.L0, MatchLevel.L1)
S = TypeVar("S")
T = TypeVar("T")


def wall_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class SourceSet:
    sources: tuple[Source, ...]
    alerts: tuple[AlertSource, ...] = ()
    metrics: tuple[MetricSource, ...] = ()
    logs: tuple[LogSource, ...] = ()
    knowledge: tuple[KnowledgeSource, ...] = ()
    cluster: tuple[ClusterSource, ...] = ()
    clock: Callable[[], datetime] = wall_clock  # "now" for relative windows
    aliases: Mapping[str, str] = field(default_factory=dict)  # the data's own service aliases
    services: ServiceCatalog = field(init=False)

    def __post_init__(self) -> None:
        self.services = ServiceCatalog(self._readers(), self.aliases)

    def _readers(self) -> list[SightingReader]:
        """The catalog's readers in a fixed order, since a name keeps the spelling read first and
        lists its sources in the order read: each source's sightings (an alert source's include
        its alerts', through services.alert_sightings); the alert sources over several servers
        right after the first source (the data directory), before the servers themselves."""
        sources = {id(s) for s in self.sources}
        adapters = [a for a in self.alerts if id(a) not in sources]
        readers: list[SightingReader] = []
        for position, source in enumerate(self.sources):
            readers.append(source.sightings)
            if position == 0:
                readers.extend(self._alert_reader(a) for a in adapters)
        if not self.sources:
            readers.extend(self._alert_reader(a) for a in adapters)
        return readers

    def _alert_reader(self, source: AlertSource) -> SightingReader:
        return lambda: alert_sightings(source, self.now())

    @property
    def signals(self) -> SignalCatalog | None:
        """The first metric source's signal catalog (None: no metric source to ask)."""
        return self.metrics[0].signals if self.metrics else None

    def watched(self) -> list[Source]:
        """The sources the service's health loop checks."""
        return [s for s in self.sources if s.watched]

    def now(self) -> datetime:
        return self.clock()

    async def query_metrics(self, query: MetricsQuery) -> Page:
        now = self.now()
        return _joined(await _each(self.alerts, lambda s: s.query_alerts(query, now)), query.limit, "alert")

    async def query_logs(self, query: LogsQuery) -> Page:
        if len(self.logs) > 1:  # newest first across the sources (merged_logs.py)
            return await MergedLogs(self._named_logs()).query_logs(query)
        return _joined(await _each(self.logs, lambda s: s.query_logs(query)), query.limit, "log")

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        if len(self.logs) > 1:  # templates joined by their text
            return await MergedLogs(self._named_logs()).summarize_logs(query)
        return _joined(await _each(self.logs, lambda s: s.summarize_logs(query)), query.limit, "log")

    def _named_logs(self) -> list[NamedLogs]:
        named: list[NamedLogs] = []
        for number, source in enumerate(self.logs):
            name = getattr(source, "name", None)
            named.append(_Named(name if isinstance(name, str) else f"logs-{number}", source))
        return named

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits:
        hits = await _each(self.knowledge, lambda s: s.lookup_knowledge(query))
        if not hits:
            raise ToolError("no knowledge source configured")
        if len(hits) == 1:
            return hits[0]
        level = next((lv for lv in _LEVELS if any(h.match_level == lv for h in hits)), MatchLevel.NONE)
        best = [h for h in hits if h.match_level == level]
        blocks = [block for h in best for block in h.blocks][: query.limit]
        return KnowledgeHits(blocks, level, best[0].details)

    async def query_promql(self, query: PromQLQuery) -> SeriesAnswer:
        if not self.metrics:
            raise ToolError(NO_METRIC_SOURCE)
        return await self.metrics[0].query_promql(query, self.now())

    async def aclose(self) -> None:
        for source in self.sources:
            await source.aclose()


@dataclass(frozen=True)
class _Named:
    """A log source without a name of its own, named by its place in the set."""

    name: str
    source: LogSource

    async def query_logs(self, query: LogsQuery) -> Page:
        return await self.source.query_logs(query)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return await self.source.summarize_logs(query)


async def _each(sources: Sequence[S], ask: Callable[[S], Awaitable[T]]) -> list[T]:
    """Every source's answer; any failure fails the call (a partial answer could read as "nothing")."""
    if len(sources) == 1:
        return [await ask(sources[0])]
    return list(await asyncio.gather(*(ask(s) for s in sources)))


def _joined(pages: list[Page], limit: int, kind: str) -> Page:
    if not pages:
        raise ToolError(f"no {kind} source configured")
    if len(pages) == 1:
        return pages[0]
    items = [item for page in pages for item in page.items][:limit]
    extra: dict[str, Any] = {}
    for page in pages:
        for key, value in page.extra.items():
            if isinstance(value, int | float) and isinstance(extra.get(key, 0), int | float):
                extra[key] = extra.get(key, 0) + value
            elif isinstance(value, dict) and isinstance(extra.get(key, {}), dict):
                extra[key] = {**extra.get(key, {}), **value}
            else:
                extra.setdefault(key, value)
    return Page(items, sum(page.total for page in pages), extra)
