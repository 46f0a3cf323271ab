"""The evidence-ref text of one series: one stable line holding every fact a claim may quote.

Instant: `http_requests_total{code=500, service=pay} value=0.039 (3.9%) at 2026-07-08 10:05`.
Range: the same head, then window, step, points and first / last / min / max (each with its time)
and avg. The Gatekeeper pins every number and identifier of an excerpt to this text, token for
token, so the formats are chosen for that: labels as `key=value` (pinnable pairs, no quotes), times
in UTC as `YYYY-MM-DD HH:MM` with `:SS` only when the seconds are not zero (so "at 10:05" is a
token of the text), values rounded to 6 significant digits (whole numbers from a million up keep
every digit), and a unit-scaled twin in parentheses where the unit is known (a ratio 0.039 also
reads 3.9%, seconds also read as ms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from .prom_types import QueryResult, RangeSpec, Sample, Series, finite

_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.:/%+@")


def fmt_time(t: float) -> str:
    moment = datetime.fromtimestamp(t, UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}"
    return moment.strftime("%Y-%m-%d %H:%M" if moment.second == 0 else "%Y-%m-%d %H:%M:%S")


def fmt_duration(seconds: float) -> str:
    """Prometheus style: 90 -> 1m30s, 0.5 -> 500ms, 3600 -> 1h."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    whole = round(seconds)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if whole >= size:
            parts.append(f"{whole // size}{unit}")
            whole %= size
    return "".join(parts) or "0s"


def fmt_number(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if abs(v) >= 1e6 and abs(v) < 1e15:
        return str(round(v))  # counters and byte counts: every integer digit is kept
    r = float(f"{v:.6g}")
    if r.is_integer() and abs(r) < 1e15:
        return str(int(r))
    return repr(r)


def _short(v: float) -> str:
    r = float(f"{v:.3g}")
    return str(int(r)) if r.is_integer() else repr(r)


def fmt_value(v: float, unit: str | None = None) -> str:
    """The raw value, and for a known unit its scaled reading: `0.039 (3.9%)`, `0.42 (420ms)`."""
    raw = fmt_number(v)
    if unit is None or not math.isfinite(v):
        return raw
    if unit == "ratio":
        return f"{raw} ({_short(v * 100)}%)"
    if unit == "percent":
        return f"{raw} ({_short(v)}%)"
    if unit == "seconds":
        if abs(v) >= 3600:  # an age or an uptime reads in hours
            return f"{raw} ({_short(v / 3600)}h)"
        return f"{raw} ({_short(v * 1000)}ms)" if abs(v) < 1 else f"{raw} ({_short(v)}s)"
    if unit == "bytes":
        for suffix, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if abs(v) >= size:
                return f"{raw} ({_short(v / size)}{suffix})"
        return f"{raw} ({_short(v)}B)"
    if unit == "cores":
        return f"{raw} ({_short(v * 100)}% of a core)"
    return f"{raw} ({_short(v)} {unit})"


def _label_value(value: str) -> str:
    text = " ".join(value.split())
    if text and all(c in _PLAIN for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def series_head(labels: Mapping[str, str], name: str) -> str:
    rest = ", ".join(f"{k}={_label_value(v)}" for k, v in sorted(labels.items()) if k != "__name__")
    return f"{labels.get('__name__') or name}{{{rest}}}"


def _at(s: Sample, unit: str | None) -> str:
    return f"{fmt_value(s.v, unit)} at {fmt_time(s.t)}"


def instant_text(series: Series, name: str, unit: str | None = None) -> str:
    sample = series.samples[-1]
    return f"{series_head(series.labels, name)} value={_at(sample, unit)}"


@dataclass(frozen=True)
class SeriesStats:
    """first / last / min / max (each a sample) and avg of a range series' numeric samples."""

    points: int
    first: Sample
    last: Sample
    low: Sample
    high: Sample
    avg: float


def series_stats(series: Series) -> SeriesStats | None:
    """None when no sample is a number (all NaN)."""
    values = finite(series.samples)
    if not values:
        return None
    # min / max report their earliest occurrence, so the text is stable for ties.
    return SeriesStats(
        points=len(series.samples),
        first=values[0],
        last=values[-1],
        low=min(values, key=lambda s: (s.v, s.t)),
        high=max(values, key=lambda s: (s.v, -s.t)),
        avg=math.fsum(s.v for s in values) / len(values),
    )


def range_text(series: Series, spec: RangeSpec, name: str, unit: str | None = None) -> str:
    head = series_head(series.labels, name)
    window = f"window={fmt_time(spec.start)} to {fmt_time(spec.end)}; step={fmt_duration(spec.step)}"
    stats = series_stats(series)
    if stats is None:
        return f"{head} {window}; points={len(series.samples)}; no numeric value"
    parts = [
        f"first={_at(stats.first, unit)}",
        f"last={_at(stats.last, unit)}",
        f"min={_at(stats.low, unit)}",
        f"max={_at(stats.high, unit)}",
        f"avg={fmt_value(stats.avg, unit)}",
    ]
    return f"{head} {window}; points={stats.points}; {'; '.join(parts)}"


def result_texts(result: QueryResult, name: str | None = None, unit: str | None = None) -> list[str]:
    """One text per series of `result`, in its order (`$.series[i]`); a scalar or string is one text.

    `name` stands in for `__name__` on series an expression produced (sum, rate, ...): the caller
    passes the signal name or the expression itself.
    """
    label = name or result.query
    if result.scalar is not None:
        return [f"{label} scalar={_at(result.scalar, unit)}"]
    if result.string is not None:
        return [f"{label} string={result.string[1]} at {fmt_time(result.string[0])}"]
    if result.range is not None:
        return [range_text(s, result.range, label, unit) for s in result.series]
    return [instant_text(s, label, unit) for s in result.series]
