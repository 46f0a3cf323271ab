"""Sources combined: alerts and metrics from the live servers, logs and knowledge from the files.

`LiveBackend` is a FileSources over another (the file backend, for logs and knowledge): with an
Alertmanager and / or Prometheus configured, `query_metrics` is LiveAlerts' answer and
`query_promql` runs on Prometheus; without Prometheus it is not a PromQL backend at all (the tool
then fails with "no Prometheus configured"). "Now" is the wall clock: live data is about now; or a
fixed `reference` time, to investigate a past incident in the metrics, alerts and log files of that
time (an instant query without a time is then evaluated at the reference too).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

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

from .alertmanager import Alertmanager
from .config import SourcesConfig
from .discovered_metrics import discovered
from .evidence import PromqlEvidence, promql_evidence, signal_evidence
from .live_alerts import LiveAlerts
from .metric_discovery import MetricDiscovery
from .prometheus import Prometheus
from .signals import SignalCatalog, load_catalog, resolve


class FileSources(Protocol):
    """The file backend the live one stands in front of (it serves logs, patterns and knowledge)."""

    def now(self) -> datetime: ...

    async def query_metrics(self, query: MetricsQuery) -> Page: ...

    async def query_logs(self, query: LogsQuery) -> Page: ...

    async def summarize_logs(self, query: PatternsQuery) -> Page: ...

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits: ...


def _answer(evidence: PromqlEvidence) -> SeriesAnswer:
    facts = {k: v for k, v in evidence.raw.items() if k not in ("series", "total_series")}
    return SeriesAnswer(
        list(evidence.raw["series"]), [r["text"] for r in evidence.refs], evidence.total, facts
    )


class LiveAlertsBackend:
    """A FileSources whose alerts are live; logs and knowledge come from `files`."""

    def __init__(
        self,
        files: FileSources,
        alertmanager: Alertmanager | None,
        prometheus: Prometheus | None,
        catalog: SignalCatalog,
        reference: datetime | None = None,
    ) -> None:
        self.files, self.alertmanager, self.prometheus, self.catalog = (
            files,
            alertmanager,
            prometheus,
            catalog,
        )
        self.reference = reference
        self.alerts = LiveAlerts(alertmanager, prometheus, catalog.service_matches)

    def now(self) -> datetime:
        return self.reference or datetime.now(UTC)

    async def query_metrics(self, query: MetricsQuery) -> Page:
        return await self.alerts.query_metrics(query, self.now())

    async def query_logs(self, query: LogsQuery) -> Page:
        return await self.files.query_logs(query)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return await self.files.summarize_logs(query)

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits:
        return await self.files.lookup_knowledge(query)

    def clients(self) -> list[Prometheus | Alertmanager]:
        """The configured sources' clients (health checks reuse their pools)."""
        return [c for c in (self.prometheus, self.alertmanager) if c is not None]

    async def aclose(self) -> None:
        for client in self.clients():
            await client.aclose()


class LiveBackend(LiveAlertsBackend):
    """LiveAlertsBackend with a Prometheus: also answers query_promql."""

    prometheus: Prometheus

    def __init__(
        self,
        files: FileSources,
        alertmanager: Alertmanager | None,
        prometheus: Prometheus,
        catalog: SignalCatalog,
        reference: datetime | None = None,
    ) -> None:
        super().__init__(files, alertmanager, prometheus, catalog, reference)
        self.discovery = MetricDiscovery(prometheus)

    async def query_promql(self, query: PromQLQuery) -> SeriesAnswer:
        prom = self.prometheus
        ranged = query.start is not None
        end = query.end or self.now()
        if query.about is not None:
            service = query.service or ""
            metric = await discovered(prom, self.discovery, query.about, service, query.start, end)
            return _answer(metric)
        if query.signal is not None:
            signal = self.catalog.get(query.signal)
            if signal is None:
                known = ", ".join(sorted(self.catalog.signals))
                raise ToolError(f"unknown signal {query.signal!r}; the catalog has: {known}")
            # An instant query is evaluated at our "now", which need not be the server's clock.
            found = await resolve(
                prom, self.catalog, signal, query.service or "",
                at=query.at or end, start=query.start, end=end if ranged else None, step_s=query.step_s,
            )  # fmt: skip
            return _answer(signal_evidence(found))
        expr = query.expr or ""
        if query.start is not None:
            result = await prom.query_range(expr, query.start, end, query.step_s)
        else:
            result = await prom.query(expr, query.at or end)
        return _answer(promql_evidence(result))


def live_backend(
    files: FileSources,
    config: SourcesConfig,
    catalog: SignalCatalog | None = None,
    *,
    reference: datetime | None = None,
) -> FileSources:
    """`files` unchanged when no source is configured; else the combined backend (close it with
    `aclose`), whose "now" is `reference` when given, else the wall clock."""
    if not config.configured():
        return files
    catalog = catalog or load_catalog()
    am = (
        Alertmanager(config.alertmanager, catalog.service_matches)
        if config.alertmanager is not None
        else None
    )
    if config.prometheus is None:
        return LiveAlertsBackend(files, am, None, catalog, reference)
    prom = Prometheus(config.prometheus, config.prometheus_limits)
    return LiveBackend(files, am, prom, catalog, reference)
