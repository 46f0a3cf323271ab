"""Tool-ready evidence from a PromQL answer or a resolved signal: the raw result to store and one
ref per series.

`query_promql` records `raw` as the invocation's raw_result and `refs` as its evidence_refs
(`$.series[i]`, text from series_text). The raw result keeps each series' labels and its summary
(value, or first / last / min / max / avg with times) rather than every sample, so a bounded query
stays a small row; the ref text holds the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .prom_types import QueryResult, Sample, Series
from .series_text import fmt_duration, fmt_time, result_texts, series_stats
from .signals import SignalResult

JSON = dict[str, Any]
SERIES_PATH = "$.series[{}]"


@dataclass(frozen=True)
class PromqlEvidence:
    raw: JSON
    refs: list[JSON]  # empty when no series came back: the tool then records $.no_evidence

    @property
    def total(self) -> int:
        return int(self.raw["total_series"])


def _point(s: Sample) -> JSON:
    # The value as a JSON number where it is one (NaN / Inf are not JSON: kept as their text).
    value: Any = s.v if s.v == s.v and abs(s.v) != float("inf") else str(s.v)
    return {"time": fmt_time(s.t), "value": value}


def _item(series: Series, name: str, ranged: bool) -> JSON:
    item: JSON = {
        "metric": series.name or name,
        "labels": {k: v for k, v in sorted(series.labels.items()) if k != "__name__"},
    }
    if not ranged:
        item.update(_point(series.samples[-1]))
        return item
    stats = series_stats(series)
    item["points"] = len(series.samples)
    if stats is not None:
        item.update(
            first=_point(stats.first),
            last=_point(stats.last),
            min=_point(stats.low),
            max=_point(stats.high),
            avg=stats.avg,
        )
    return item


def promql_evidence(result: QueryResult, name: str | None = None, unit: str | None = None) -> PromqlEvidence:
    """`name` stands in for `__name__` on derived series (the signal name, or the expression)."""
    label = name or result.query
    raw: JSON = {
        "query": result.query,
        "result_type": result.result_type,
        "total_series": result.total_series,
        "truncated": result.truncated,
        "notes": list(result.notes),
        "warnings": list(result.warnings),
    }
    if unit:
        raw["unit"] = unit
    if result.range is not None:
        raw["window"] = {
            "start": fmt_time(result.range.start),
            "end": fmt_time(result.range.end),
            "step": fmt_duration(result.range.step),
        }
    texts = result_texts(result, name, unit)
    if result.scalar is not None:
        raw["series"] = [{"metric": label, "labels": {}, **_point(result.scalar)}]
    elif result.string is not None:
        raw["series"] = [
            {"metric": label, "labels": {}, "time": fmt_time(result.string[0]), "value": result.string[1]}
        ]
    else:
        raw["series"] = [_item(s, label, result.range is not None) for s in result.series]
    refs = [{"raw_path": SERIES_PATH.format(i), "text": t} for i, t in enumerate(texts)]
    return PromqlEvidence(raw, refs)


def signal_evidence(found: SignalResult) -> PromqlEvidence:
    """A resolved signal as evidence: series named after the signal and labelled with the service
    it was asked for (a `sum(...)` keeps no labels, yet a claim names the service), plus which
    template answered and every query tried (the no-evidence text of an unanswered signal)."""
    extra: JSON = {
        "signal": found.signal.name,
        "service": found.service,
        "tried": list(found.tried),
    }
    if found.result is None or found.template is None:
        raw: JSON = {
            "query": found.tried[-1] if found.tried else "",
            "result_type": "vector",
            "total_series": 0,
            "truncated": False,
            "notes": [],
            "warnings": [],
            "series": [],
            **extra,
        }
        return PromqlEvidence(raw, [])
    result = found.result
    labelled = tuple(Series({"service": found.service, **s.labels}, s.samples) for s in result.series)
    evidence = promql_evidence(replace(result, series=labelled), found.signal.name, found.template.unit)
    evidence.raw.update(extra, exporter=found.template.exporter)
    return evidence
