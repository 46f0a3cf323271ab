"""query_promql's `about` mode without a service: a metric of a namespace, or of the whole store.

"Which pods in app-159 use the most CPU?", "CPU per namespace", "which CPU metrics are collected?"
name no service: the metric names come from `/api/v1/label/__name__/values` (under the namespace's
matcher when one is named), bounded and cached like a service's. They are ranked against the
question's words as a service's are (metric_query.py); the best one's series are listed (bounded)
for its label names and values, and the query is written as for a service: grouped by the labels
the question names (`by (pod)`, `by (namespace)`), topped when it asks for the most. A question that
asks which metrics exist is answered by the names that match, each its own ref.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from datetime import datetime

from .discovered_metrics import MAX_CANDIDATES, query_built
from .evidence import PromqlEvidence
from .matching import promql_string, re2_escape
from .metric_discovery import LOOKBACK, MAX_SERIES, Metric, MetricDiscovery, family_of, kind_of
from .metric_query import promql, rank
from .prometheus import Prometheus
from .series_text import fmt_duration

MAX_NAMES = 5000  # metric names read from the store for one scope
MAX_LISTED = 20  # metric names quoted for "which metrics are there"
TOP = 10  # series kept when the question asks for the most
_LISTING = re.compile(
    r"\b(?:what|which|list)\b[^?？。]*\bmetrics?\b[^?？。]*\b(?:available|collect\w*|exist|there|have)\b"
    r"|\blist\b[^?？。]*\bmetrics\b|有哪些[^?？。]*指标|列出[^?？。]*指标",
    re.I,
)
_MOST = re.compile(r"\b(?:most|top|highest|biggest|heaviest)\b|最多|最高|最大|排名", re.I)


@dataclass(frozen=True)
class Scope:
    namespace: str | None  # None: the whole store

    @property
    def selectors(self) -> tuple[str, ...]:
        """The namespace's series: by their `namespace` label, else by a scrape address inside it
        (`instance="bidder.app-160.svc.cluster.local:80"`, a Service scraped by its DNS name)."""
        if not self.namespace:
            return ("",)
        address = r"[^/]*\." + re2_escape(self.namespace) + r"(\.svc[^:]*)?(:[0-9]+)?"
        return (f"namespace={promql_string(self.namespace)}", f"instance=~{promql_string(address)}")

    @property
    def name(self) -> str:
        return f"namespace {self.namespace}" if self.namespace else "the store"


def asks_listing(question: str) -> bool:
    return _LISTING.search(question) is not None


async def metrics_in(discovery: MetricDiscovery, scope: Scope, now: datetime) -> list[Metric]:
    """The metric families of the scope, by name alone (labels are read for the one chosen)."""
    key = f"\0scope:{scope.namespace or ''}"
    cached = discovery._cache.get(key)
    if cached is not None and time.monotonic() - cached[0] < discovery.ttl_s:
        return cached[1]
    found: list[Metric] = []
    for selector in scope.selectors:
        matchers = [f"{{{selector}}}"] if selector else []
        listed = await discovery.prom.label_values("__name__", matchers, now - LOOKBACK, now)
        names = set(listed[:MAX_NAMES])
        families = sorted({family_of(n, names) for n in names if not n.startswith("ALERTS")})
        found = [Metric(f, kind_of(f, names, None), "", (), selector, scoped=True) for f in families]
        if found:
            break
    discovery._cache[key] = (time.monotonic(), found)
    return found


async def with_labels(prom: Prometheus, metric: Metric, now: datetime) -> Metric:
    """The metric with the label names and values of its series in the scope (bounded)."""
    name = f"{metric.name}_bucket" if metric.kind == "histogram" else metric.name
    matchers = ", ".join(m for m in (f"__name__={promql_string(name)}", metric.selector) if m)
    listing = await prom.series([f"{{{matchers}}}"], now - LOOKBACK, now, MAX_SERIES)
    seen: dict[str, set[str]] = {}
    for item in listing.items:
        for key, value in item.items():
            if key not in ("__name__", "le"):
                seen.setdefault(key, set()).add(value)
    values = tuple((key, tuple(sorted(v))) for key, v in sorted(seen.items()))
    return replace(metric, labels=tuple(sorted(seen)), label_values=values)


def _listed(scope: Scope, about: str, metrics: list[Metric]) -> PromqlEvidence:
    ranked = rank(about, metrics)
    shown = [m for _, m in ranked[:MAX_LISTED]]
    series = [{"metric": m.name, "kind": m.kind} for m in shown]
    refs = [{"raw_path": f"$.series[{i}]", "text": f"{m.name} ({m.kind})"} for i, m in enumerate(shown)]
    raw = {"series": series, "total_series": len(ranked), "scope": scope.name, "listed": True}
    if not shown:
        raw["notes"] = [f"no metric of {scope.name} matches the question's words"]
    return PromqlEvidence(raw, refs)


async def discovered_in(  # noqa: PLR0917 - the query's parts, each named at the one call
    prom: Prometheus,
    discovery: MetricDiscovery,
    about: str,
    scope: Scope,
    start: datetime | None,
    end: datetime,
    *,
    compare: bool = False,
) -> PromqlEvidence:
    metrics = await metrics_in(discovery, scope, end)
    if asks_listing(about):
        return _listed(scope, about, metrics)
    ranked = rank(about, metrics)
    facts = {"scope": scope.name, "candidates": [f"{m.name} ({s:g})" for s, m in ranked[:MAX_CANDIDATES]]}
    if not ranked:
        evidence = PromqlEvidence({"series": [], "total_series": 0, **facts}, [])
        evidence.raw["notes"] = [f"no metric of {scope.name} matches the question's words"]
        return evidence
    metric = await with_labels(prom, ranked[0][1], end)
    window = None if start is None else fmt_duration((end - start).total_seconds())
    built = promql(metric, about, window, compare=compare)
    if built.group_by and _MOST.search(about):
        built = replace(built, expr=f"topk({TOP}, {built.expr})")
    evidence = await query_built(prom, built, metric, start, end)
    evidence.raw.update(facts)
    return evidence
