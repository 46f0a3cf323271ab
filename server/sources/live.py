"""The live servers as sources: Prometheus (metrics, and the ALERTS history) and Alertmanager (the
active alerts), built from their settings by the registry in kinds.py.

Together they are one alert source (LiveAlerts: Alertmanager's view of an active alert, Prometheus's
for what resolved in the window); Prometheus alone is also the metric source of query_promql.
kinds.add_live_sources puts them in front of the files.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from evigate.server.queries.types import PromQLQuery, SeriesAnswer, ToolError

from .alertmanager import Alertmanager
from .discovered_metrics import discovered
from .evidence import PromqlEvidence, promql_evidence, signal_evidence
from .http import SourceHealth
from .live_alerts import LiveAlerts
from .metric_discovery import MetricDiscovery
from .ports import AlertSource, Source
from .prometheus import Prometheus
from .scoped_metrics import Scope, discovered_in
from .services import Sightings, prometheus_sightings
from .signals import SignalCatalog, resolve


def _answer(evidence: PromqlEvidence) -> SeriesAnswer:
    facts = {k: v for k, v in evidence.raw.items() if k not in ("series", "total_series")}
    return SeriesAnswer(
        list(evidence.raw["series"]), [r["text"] for r in evidence.refs], evidence.total, facts
    )


class PrometheusSource:
    """A Prometheus-compatible store: a Source and the MetricSource."""

    watched = True

    def __init__(self, client: Prometheus, signals: SignalCatalog) -> None:
        self.client, self._signals = client, signals
        self.discovery = MetricDiscovery(client)  # the services' own metrics, cached

    @property
    def name(self) -> str:
        return self.client.name

    @property
    def signals(self) -> SignalCatalog:
        return self._signals

    async def health(self) -> SourceHealth:
        return await self.client.health()

    async def sightings(self) -> Sightings:
        """The values of the service labels the signal catalog matches with `=`."""
        labels = [m.label for m in self._signals.service_matches if m.op == "="]
        return await prometheus_sightings(self.client.label_values, labels)

    async def label_values(self, label: str) -> list[str]:
        return await self.client.label_values(label)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def query_promql(self, query: PromQLQuery, now: datetime) -> SeriesAnswer:
        prom, catalog = self.client, self._signals
        ranged = query.start is not None
        end = query.end or now
        if query.about is not None and query.service is None:
            scope = Scope(query.namespace)
            return _answer(
                await discovered_in(
                    prom, self.discovery, query.about, scope, query.start, end, compare=query.compare
                )
            )
        if query.about is not None:
            service = query.service or ""
            return _answer(
                await discovered(
                    prom, self.discovery, query.about, service, query.start, end, compare=query.compare
                )
            )
        if query.signal is not None:
            signal = catalog.get(query.signal)
            if signal is None:
                known = ", ".join(sorted(catalog.signals))
                raise ToolError(f"unknown signal {query.signal!r}; the catalog has: {known}")
            # An instant query is evaluated at our "now", which need not be the server's clock.
            found = await resolve(
                prom, catalog, signal, query.service or "",
                at=query.at or end, start=query.start, end=end if ranged else None, step_s=query.step_s,
            )  # fmt: skip
            return _answer(signal_evidence(found))
        expr = query.expr or ""
        if query.start is not None:
            result = await prom.query_range(expr, query.start, end, query.step_s)
        else:
            result = await prom.query(expr, query.at or end)
        return _answer(promql_evidence(result))


class AlertmanagerSource:
    """An Alertmanager: a Source whose alerts are read through the live alert source."""

    watched = True

    def __init__(self, client: Alertmanager) -> None:
        self.client = client

    @property
    def name(self) -> str:
        return self.client.name

    async def health(self) -> SourceHealth:
        return await self.client.health()

    async def sightings(self) -> Sightings:
        return Sightings()  # its alerts' names come from the alert source (services.alert_sightings)

    async def aclose(self) -> None:
        await self.client.aclose()


def live_alerts(sources: Mapping[str, Source], signals: SignalCatalog) -> tuple[AlertSource, ...]:
    """The one alert source over the live servers configured (none: the files keep the alerts)."""
    am, prom = sources.get("alertmanager"), sources.get("prometheus")
    am_client = am.client if isinstance(am, AlertmanagerSource) else None
    prom_client = prom.client if isinstance(prom, PrometheusSource) else None
    if am_client is None and prom_client is None:
        return ()
    return (LiveAlerts(am_client, prom_client, signals.service_matches),)
