"""Typed results of the Prometheus HTTP API v1, parsed once from its JSON.

The same parsing serves any Prometheus-compatible store (VictoriaMetrics answers the same shapes).
A malformed answer raises `BadAnswerError`, which the client turns into a `SourceError(bad_response)`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

from evigate.rules.errors import EvigateError

ResultType = Literal["vector", "matrix", "scalar", "string"]


class BadAnswerError(EvigateError, ValueError):
    """The server's JSON does not have the documented shape."""


class Sample(NamedTuple):
    """A NamedTuple, not a dataclass: a bounded range query still parses 55,000 of them."""

    t: float  # unix seconds
    v: float  # NaN / ±Inf kept as floats

    @property
    def time(self) -> datetime:
        return datetime.fromtimestamp(self.t, UTC)


@dataclass(frozen=True)
class Series:
    """One labelled series: an instant vector element (one sample) or a range (several)."""

    labels: Mapping[str, str]
    samples: tuple[Sample, ...]

    @property
    def name(self) -> str | None:
        return self.labels.get("__name__")

    def key(self) -> tuple[tuple[str, str], ...]:
        """A stable sort key: the label set, name first."""
        return tuple(sorted(self.labels.items(), key=lambda kv: (kv[0] != "__name__", kv[0], kv[1])))


@dataclass(frozen=True)
class RangeSpec:
    start: float
    end: float
    step: float


@dataclass(frozen=True)
class QueryResult:
    """An instant or range query's answer; `series` holds at most the bound, `total_series` all."""

    query: str
    result_type: ResultType
    series: tuple[Series, ...]
    total_series: int
    scalar: Sample | None = None
    string: tuple[float, str] | None = None
    warnings: tuple[str, ...] = ()
    time: float | None = None  # evaluation time of an instant query
    range: RangeSpec | None = None
    notes: tuple[str, ...] = ()  # what the guard changed (step raised, series cut)

    @property
    def truncated(self) -> bool:
        return self.total_series > len(self.series)


@dataclass(frozen=True)
class PromAlert:
    """An alert as Prometheus' rule manager holds it (`/api/v1/alerts`)."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    state: str  # pending | firing
    active_at: datetime | None
    value: float | None


@dataclass(frozen=True)
class Rule:
    name: str
    type: str  # alerting | recording
    query: str
    health: str
    last_error: str | None
    duration_s: float
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    state: str | None  # alerting rules: inactive | pending | firing
    alerts: tuple[PromAlert, ...] = field(default=())


@dataclass(frozen=True)
class RuleGroup:
    name: str
    file: str
    interval_s: float
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class MetricMetadata:
    metric: str
    type: str
    help: str
    unit: str


def _num(value: Any) -> float:
    try:
        return float(value)  # Prometheus sends numbers as strings: "1.5", "NaN", "+Inf"
    except (TypeError, ValueError) as exc:
        raise BadAnswerError(f"not a number: {value!r}") from exc


def _sample(raw: Any) -> Sample:
    if not isinstance(raw, list) or len(raw) != 2:
        raise BadAnswerError(f"expected [time, value], got {raw!r}")
    return Sample(_num(raw[0]), _num(raw[1]))


def _samples(raw: Any) -> tuple[Sample, ...]:
    """A matrix series' values in one pass (the hot path); any malformed pair fails the whole."""
    try:
        return tuple([Sample(float(t), float(v)) for t, v in raw])
    except (TypeError, ValueError) as exc:
        raise BadAnswerError(f"malformed [time, value] pairs: {exc}") from exc


def _labels(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise BadAnswerError(f"expected a label mapping, got {type(raw).__name__}")
    return {str(k): str(v) for k, v in raw.items()}


def parse_time(raw: Any) -> datetime | None:
    """RFC 3339 with up to nanoseconds (Go's format) to an aware datetime; Go's zero time is None."""
    if not raw or not isinstance(raw, str) or raw.startswith("0001-01-01"):
        return None
    text = raw.replace("Z", "+00:00")
    if "." in text:
        head, rest = text.split(".", 1)
        digits = len(rest) - len(rest.lstrip("0123456789"))
        text = f"{head}.{rest[:digits][:6].ljust(6, '0')}{rest[digits:]}"
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError as exc:
        raise BadAnswerError(f"bad time {raw!r}") from exc


def parse_series(result_type: str, result: Any) -> list[Series]:
    if not isinstance(result, list):
        raise BadAnswerError(f"{result_type} result is not a list")
    series = []
    for item in result:
        if not isinstance(item, Mapping):
            raise BadAnswerError("series item is not an object")
        if result_type == "vector":
            samples: tuple[Sample, ...] = (_sample(item.get("value")),)
        else:
            samples = _samples(item.get("values") or ())
        series.append(Series(_labels(item.get("metric", {})), samples))
    return series


def parse_alert(raw: Any) -> PromAlert:
    if not isinstance(raw, Mapping):
        raise BadAnswerError("alert is not an object")
    value = raw.get("value")
    return PromAlert(
        labels=_labels(raw.get("labels", {})),
        annotations=_labels(raw.get("annotations", {})),
        state=str(raw.get("state", "")),
        active_at=parse_time(raw.get("activeAt")),
        value=_num(value) if value is not None else None,
    )


def parse_rule_groups(data: Any) -> list[RuleGroup]:
    groups = data.get("groups") if isinstance(data, Mapping) else None
    if not isinstance(groups, list):
        raise BadAnswerError("rules answer has no groups list")
    out = []
    for g in groups:
        rules = []
        for r in g.get("rules") or ():
            rules.append(
                Rule(
                    name=str(r.get("name", "")),
                    type=str(r.get("type", "")),
                    query=str(r.get("query", "")),
                    health=str(r.get("health", "")),
                    last_error=str(r["lastError"]) if r.get("lastError") else None,
                    duration_s=float(r.get("duration") or 0),
                    labels=_labels(r.get("labels") or {}),
                    annotations=_labels(r.get("annotations") or {}),
                    state=str(r["state"]) if "state" in r else None,
                    alerts=tuple(parse_alert(a) for a in r.get("alerts") or ()),
                )
            )
        out.append(
            RuleGroup(
                str(g.get("name", "")), str(g.get("file", "")), float(g.get("interval") or 0), tuple(rules)
            )
        )
    return out


def parse_metadata(data: Any) -> list[MetricMetadata]:
    if not isinstance(data, Mapping):
        raise BadAnswerError("metadata answer is not an object")
    return [
        MetricMetadata(str(metric), str(m.get("type", "")), str(m.get("help", "")), str(m.get("unit", "")))
        for metric, entries in sorted(data.items())
        for m in entries or ()
    ]


def finite(samples: tuple[Sample, ...]) -> list[Sample]:
    """The samples a min / max / avg may use (NaN is no value; ±Inf are kept: they are real answers)."""
    return [s for s in samples if not math.isnan(s.v)]
