"""Metrics beyond the signal catalog: which metrics a service actually has, and the one a question means.

A service's own metrics (a proxy's 5xx counters, a custom latency histogram by `version`) are found
through the Prometheus API, never guessed: the values of the usual service labels
(`/api/v1/label/<name>/values`) say how the store spells the service (`OrderRouter`, `ledger_sync`,
`pricing/fare-search` for the catalog's `order-router`, `ledger-sync`, `fare-search`), and
`/api/v1/series` lists the metric names and label names of its series. `/api/v1/metadata` adds TYPE
and HELP where the store keeps them (VictoriaMetrics keeps none: the suffix then says the type).
Everything is bounded (the client's series limit) and cached per service for `ttl_s`, so a second
question about the service costs no request. metric_query.py ranks the metrics against a question
and writes the PromQL.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .http import SourceError
from .matching import promql_string, re2_escape
from .prometheus import Prometheus

# Labels whose value names the service a series belongs to, as exporters write them.
SERVICE_LABELS = ("service", "job", "app", "application", "container")
LOOKBACK = timedelta(days=1)  # series seen in the last day count as the service's
DEFAULT_TTL_S = 300.0
MAX_SERIES = 2000  # series read per matcher: a service's metric families and their labels
_SEPARATORS = re.compile(r"[\s_.\-/:]+")
_SERIES_PARTS = ("_bucket", "_count", "_sum")


def _normal(name: str) -> str:
    return _SEPARATORS.sub("", name.casefold())


@dataclass(frozen=True)
class Metric:
    """One metric family of a service: `name` without a histogram's _bucket / _count / _sum."""

    name: str
    kind: str  # counter | histogram | summary | gauge
    help: str
    labels: tuple[str, ...]  # label names of its series, besides __name__ and le
    selector: str  # the matcher that selects the service's series: job="ledger_sync"
    label_values: tuple[tuple[str, tuple[str, ...]], ...] = ()  # label → values seen
    scoped: bool = False  # a namespace's or the store's metric, not one service's: pods are compared


def kind_of(name: str, names: set[str], declared: str | None) -> str:
    if declared in ("counter", "histogram", "summary", "gauge"):
        return declared
    if f"{name}_bucket" in names:
        return "histogram"
    if name.endswith("_total"):
        return "counter"
    return "gauge"


def family_of(name: str, names: set[str]) -> str:
    """A histogram's series name without its _bucket / _count / _sum part."""
    for part in _SERIES_PARTS:
        base = name.removesuffix(part)
        if base != name and f"{base}_bucket" in names:
            return base
    return name


class MetricDiscovery:
    """The metrics of each service, read from one Prometheus-compatible store and cached."""

    def __init__(
        self, prom: Prometheus, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.prom = prom
        self.ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[str, tuple[float, list[Metric]]] = {}
        self._labels: tuple[float, dict[str, list[str]]] | None = None
        self._metadata: dict[str, tuple[str, str]] | None = None
        self._lock = asyncio.Lock()

    async def metrics_of(self, service: str, now: datetime) -> list[Metric]:
        """The service's metric families (empty when the store holds no series of it)."""
        cached = self._cache.get(service)
        if cached is not None and self._clock() - cached[0] < self.ttl_s:
            return cached[1]
        async with self._lock:
            cached = self._cache.get(service)
            if cached is not None and self._clock() - cached[0] < self.ttl_s:
                return cached[1]
            found = await self._discover(service, now)
            self._cache[service] = (self._clock(), found)
            return found

    async def selectors(self, service: str, now: datetime) -> list[str]:
        """Matchers for the service's series: the service labels whose value is the service's name
        in any case or with any separators (a team prefix aside), then its pods by name."""
        values = await self._label_values(now)
        wanted = _normal(service)
        out = [
            f"{label}={promql_string(value)}"
            for label in SERVICE_LABELS
            for value in values.get(label, ())
            if _normal(value.rsplit("/", 1)[-1]) == wanted
        ]
        pod = "-".join(p for p in _SEPARATORS.split(service.casefold()) if p)
        out.append(f"pod=~{promql_string(re2_escape(pod) + '-.*')}")
        return out

    async def _label_values(self, now: datetime) -> dict[str, list[str]]:
        if self._labels is not None and self._clock() - self._labels[0] < self.ttl_s:
            return self._labels[1]
        start = now - LOOKBACK
        present = set(await self.prom.labels((), start, now))
        values = {
            label: await self.prom.label_values(label, (), start, now)
            for label in SERVICE_LABELS
            if label in present
        }
        self._labels = (self._clock(), values)
        return values

    async def _declared(self) -> dict[str, tuple[str, str]]:
        """TYPE and HELP by metric name; empty where the store keeps no metadata."""
        if self._metadata is None:
            try:
                self._metadata = {m.metric: (m.type, m.help) for m in await self.prom.metadata()}
            except SourceError:
                self._metadata = {}
        return self._metadata

    async def _discover(self, service: str, now: datetime) -> list[Metric]:
        declared = await self._declared()
        families: dict[str, Metric] = {}
        for selector in await self.selectors(service, now):
            listing = await self.prom.series([f"{{{selector}}}"], now - LOOKBACK, now, MAX_SERIES)
            if not listing.items:
                continue
            names = {item.get("__name__", "") for item in listing.items}
            labels: dict[str, dict[str, set[str]]] = {}
            for item in listing.items:
                name = item.get("__name__", "")
                if not name or name.startswith("ALERTS"):
                    continue
                family = family_of(name, names)
                seen = labels.setdefault(family, {})
                for key, value in item.items():
                    if key not in ("__name__", "le"):
                        seen.setdefault(key, set()).add(value)
            for family, seen in labels.items():
                if family in families:
                    continue
                kind, help_text = declared.get(family, ("", ""))
                families[family] = Metric(
                    family,
                    kind_of(family, names, kind or None),
                    help_text,
                    tuple(sorted(seen)),
                    selector,
                    tuple((key, tuple(sorted(values))) for key, values in sorted(seen.items())),
                )
        return list(families.values())
