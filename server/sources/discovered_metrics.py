"""query_promql's `about` mode: the service's discovered metric that a question means, queried.

The metrics of the service come from MetricDiscovery (cached), the best-ranked one for the words of
`about` is queried as metric_query.py writes it: over the window as a range (each series' ref then
holds first / last / min / max with times and, where the level moved, its change point with both
levels), or as an increase read at the window's end when the question asks "how many". The facts
say which metric was chosen, why, and which others were candidates; no metric of the service
sharing a word with the question is no evidence, with the metrics that were there.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta

from .evidence import PromqlEvidence, promql_evidence
from .metric_discovery import Metric, MetricDiscovery
from .metric_query import Built, change_point, promql, rank, unit_of
from .prom_types import Series, finite
from .prometheus import Prometheus
from .series_text import fmt_duration

MAX_CANDIDATES = 5


def _window(start: datetime | None, end: datetime) -> str | None:
    if start is None:
        return None
    return fmt_duration((end - start).total_seconds())


async def discovered(  # noqa: PLR0917 - the query's parts, each named at the one call
    prom: Prometheus,
    discovery: MetricDiscovery,
    about: str,
    service: str,
    start: datetime | None,
    end: datetime,
    *,
    compare: bool = False,
) -> PromqlEvidence:
    metrics = await discovery.metrics_of(service, end)
    ranked = rank(about, metrics)
    facts = {
        "service": service,
        "discovered": [m.name for m in metrics][:20],
        "candidates": [f"{m.name} ({score:g})" for score, m in ranked[:MAX_CANDIDATES]],
    }
    if not ranked:
        evidence = PromqlEvidence({"series": [], "total_series": 0, **facts}, [])
        evidence.raw["notes"] = [f"no metric of {service} matches the question's words"]
        return evidence
    metric = ranked[0][1]
    built = promql(metric, about, _window(start, end), compare=compare)
    evidence = await query_built(prom, built, metric, start, end)
    evidence.raw.update(facts)
    return evidence


async def query_built(
    prom: Prometheus, built: Built, metric: Metric, start: datetime | None, end: datetime
) -> PromqlEvidence:
    """The built query run (a range aligned to end at `end`, or an instant), its series as evidence
    with each range series' change point; a grouped result ordered by value, highest first."""
    if built.instant or start is None:
        result = await prom.query(built.expr, end)
    else:
        # Whole steps back from the end, so the last point is the value at the end itself.
        step, _ = prom.plan_step(start, end, None)
        steps = math.ceil((end - start).total_seconds() / step)
        result = await prom.query_range(built.expr, end - timedelta(seconds=steps * step), end, step)
    if built.group_by:
        result = replace(result, series=tuple(sorted(result.series, key=_level, reverse=True)))
    evidence = promql_evidence(result, metric.name, built.unit or unit_of(metric.name))
    evidence.raw["metric"] = metric.name
    evidence.raw["why"] = built.why
    if result.range is not None:
        for i, series in enumerate(result.series):
            change = change_point(series)
            if change is not None and i < len(evidence.refs):
                evidence.refs[i]["text"] += f"; {change}"
                evidence.raw["series"][i]["change"] = change
    return evidence


def _level(series: Series) -> float:
    values = [s.v for s in finite(series.samples)]
    return sum(values) / len(values) if values else -math.inf
