"""The SourceSet against fakes of the ports: capabilities filled by several sources are asked as one,
the catalog reads every source, and the registry of kinds covers every configurable source."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evigate.rules.enums import MatchLevel
from evigate.server.queries.types import (
    KnowledgeHits,
    KnowledgeQuery,
    LogsQuery,
    MetricsQuery,
    Page,
    PatternsQuery,
    PromQLQuery,
    TimeWindow,
    ToolError,
)
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.kinds import SOURCE_KINDS
from evigate.server.sources.ports import NO_METRIC_SOURCE, AlertSource, KnowledgeSource, LogSource, Source
from evigate.server.sources.services import Sighting, Sightings, alert_sightings
from evigate.server.sources.source_set import SourceSet
from evigate.server.sources.sources_config import SOURCE_NAMES

NOW = datetime(2026, 11, 3, 10, 0, tzinfo=UTC)
ALL = TimeWindow(None, None)


class FakeLogs:
    """A log store holding `lines`, each an item; reports how many lines it skipped."""

    watched = False

    def __init__(self, name: str, lines: list[str], skipped: int = 0, services: tuple[str, ...] = ()) -> None:
        self.name, self.lines, self.skipped, self.services = name, lines, skipped, services
        self.closed = False

    async def health(self) -> SourceHealth:
        return SourceHealth(self.name, "fake://", True, True)

    async def sightings(self) -> Sightings:
        return Sightings(tuple(Sighting(s, "log") for s in self.services))

    async def aclose(self) -> None:
        self.closed = True

    async def query_logs(self, query: LogsQuery) -> Page:
        items = [
            {"message": line, "source": self.name} for line in self.lines if (query.keyword or "") in line
        ]
        return Page(
            items[: query.limit], len(items), {"skipped_lines": self.skipped, "parsers": {self.name: "x"}}
        )

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return Page([{"pattern": self.name}], 1)


class FakeAlerts:
    watched = True
    name = "pager"

    def __init__(self, items: list[dict[str, object]]) -> None:
        self.items = items

    async def health(self) -> SourceHealth:
        return SourceHealth(self.name, "fake://", True, True)

    async def sightings(self) -> Sightings:
        return await alert_sightings(self, NOW)

    async def aclose(self) -> None:
        pass

    async def query_alerts(self, query: MetricsQuery, now: datetime) -> Page:
        return Page(list(self.items), len(self.items))


class FakeKnowledge:
    def __init__(self, level: str, blocks: list[str]) -> None:
        self.level, self.blocks = level, blocks

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits:
        return KnowledgeHits([{"text": b} for b in self.blocks], self.level)


def test_the_fakes_fill_the_ports() -> None:
    logs, alerts = FakeLogs("a", []), FakeAlerts([])
    assert isinstance(logs, LogSource) and isinstance(alerts, AlertSource)
    assert isinstance(FakeKnowledge(MatchLevel.L0, []), KnowledgeSource)
    sources: list[Source] = [logs, alerts]
    assert [s.name for s in sources] == ["a", "pager"]


async def test_two_log_sources_are_searched_as_one() -> None:
    first = FakeLogs("files", ["pool exhausted at 10:01", "ok"], skipped=2)
    second = FakeLogs("clickhouse", ["pool exhausted at 10:02", "pool exhausted at 10:03"], skipped=1)
    sources = SourceSet(sources=(first, second), logs=(first, second), clock=lambda: NOW)
    page = await sources.query_logs(LogsQuery(None, None, "pool", None, ALL, 2))
    assert [(i["source"], i["message"]) for i in page.items] == [
        ("files", "pool exhausted at 10:01"),
        ("clickhouse", "pool exhausted at 10:02"),
    ]
    assert page.total == 3
    assert page.extra == {"skipped_lines": 3, "parsers": {"files": "x", "clickhouse": "x"}}
    patterns = await sources.summarize_logs(PatternsQuery(None, None, ALL, 10))
    assert [i["pattern"] for i in patterns.items] == ["files", "clickhouse"]


async def test_one_source_answers_unchanged_and_a_missing_capability_fails() -> None:
    only = FakeLogs("files", ["a b"], skipped=4)
    sources = SourceSet(sources=(only,), logs=(only,), clock=lambda: NOW)
    page = await sources.query_logs(LogsQuery(None, None, "a", None, ALL, 5))
    assert page == await only.query_logs(LogsQuery(None, None, "a", None, ALL, 5))
    with pytest.raises(ToolError, match="no alert source configured"):
        await sources.query_metrics(MetricsQuery(None, None, None, ALL, 5))
    with pytest.raises(ToolError) as raised:
        await sources.query_promql(PromQLQuery("up", None, None))
    assert str(raised.value) == NO_METRIC_SOURCE
    assert sources.signals is None


async def test_knowledge_takes_the_best_level_any_source_reached() -> None:
    sources = SourceSet(
        sources=(),
        knowledge=(FakeKnowledge(MatchLevel.L1, ["loose"]), FakeKnowledge(MatchLevel.L0, ["exact"])),
    )
    hits = await sources.lookup_knowledge(KnowledgeQuery("HikariPool-1", 5))
    assert hits.match_level == MatchLevel.L0 and [b["text"] for b in hits.blocks] == ["exact"]


async def test_the_catalog_reads_every_source_in_order() -> None:
    pod = {"pod": "ledger-sync-7d9f8b6c5d-x2k4q"}
    alerts = FakeAlerts([
        {"alert_name": "PodCrashLooping", "service": "billing", "labels": pod},
        {"alert_name": "HighLatency", "service": "checkout", "labels": {"app_kubernetes_io_name": "cart"}},
    ])  # fmt: skip
    logs = FakeLogs("files", [], services=("billing", "mailer"))
    sources = SourceSet(sources=(logs, alerts), alerts=(alerts,), logs=(logs,), clock=lambda: NOW)
    view = await sources.services.refresh()
    assert set(view.services) == {"billing", "ledger-sync", "checkout", "cart", "mailer"}
    assert view.services["billing"] == ("log", "alert")  # in the order of the set's sources
    assert view.alert_names == ("PodCrashLooping", "HighLatency")
    assert sources.watched() == [alerts]


async def test_closing_the_set_closes_every_source() -> None:
    first, second = FakeLogs("a", []), FakeLogs("b", [])
    await SourceSet(sources=(first, second), logs=(first, second)).aclose()
    assert first.closed and second.closed


def test_every_configurable_source_has_a_kind() -> None:
    """A new source is a folder, one SOURCE_KINDS line and its settings: the two lists agree."""
    assert set(SOURCE_KINDS) == set(SOURCE_NAMES)
