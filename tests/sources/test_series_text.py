"""Ref texts of series: stable one-liners holding every fact a claim may quote (table-driven)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evigate.rules.text import scan
from evigate.server.sources.prom_types import QueryResult, RangeSpec, Sample, Series
from evigate.server.sources.series_text import fmt_duration, fmt_number, fmt_time, fmt_value, result_texts

T0 = datetime(2026, 7, 8, 10, 0, tzinfo=UTC).timestamp()
LABELS = {"__name__": "http_error_ratio", "service": "payment-service", "route": "/api/pay", "env": "prod eu"}


def _range(values: list[float], step: float = 60) -> QueryResult:
    samples = tuple(Sample(T0 + i * step, v) for i, v in enumerate(values))
    spec = RangeSpec(T0, T0 + (len(values) - 1) * step, step)
    return QueryResult("q", "matrix", (Series(LABELS, samples),), 1, range=spec)


def test_an_instant_series_text() -> None:
    result = QueryResult("q", "vector", (Series(LABELS, (Sample(T0 + 300, 0.039),)),), 1)
    assert result_texts(result, unit="ratio") == [
        'http_error_ratio{env="prod eu", route=/api/pay, service=payment-service} '
        "value=0.039 (3.9%) at 2026-07-08 10:05"
    ]


def test_a_range_series_text() -> None:
    text = result_texts(_range([0.01, 0.039, 0.02, 0.039, 0.005, 0.03]), unit="ratio")[0]
    assert text == (
        'http_error_ratio{env="prod eu", route=/api/pay, service=payment-service} '
        "window=2026-07-08 10:00 to 2026-07-08 10:05; step=1m; points=6; "
        "first=0.01 (1%) at 2026-07-08 10:00; last=0.03 (3%) at 2026-07-08 10:05; "
        "min=0.005 (0.5%) at 2026-07-08 10:04; max=0.039 (3.9%) at 2026-07-08 10:01; "
        "avg=0.0238333 (2.38%)"
    )


def test_a_claim_like_error_rate_at_a_time_finds_every_critical_token_in_the_text() -> None:
    text = result_texts(_range([0.01, 0.02, 0.03, 0.02, 0.01, 0.039]), unit="ratio")[0]
    _, critical = scan("payment-service error rate 3.9% at 10:05")
    tokens, _ = scan(text)
    assert critical and all(c.lower() in tokens for c in critical)


def test_a_derived_series_takes_the_given_name_and_nan_is_no_value() -> None:
    result = QueryResult(
        "sum(x)", "matrix", (Series({}, (Sample(T0, float("nan")),)),), 1, range=RangeSpec(T0, T0, 15)
    )
    assert result_texts(result) == [
        "sum(x){} window=2026-07-08 10:00 to 2026-07-08 10:00; step=15s; points=1; no numeric value"
    ]
    assert result_texts(result, name="cpu")[0].startswith("cpu{} ")


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (0.039, "ratio", "0.039 (3.9%)"),
        (0.0391234, "ratio", "0.0391234 (3.91%)"),
        (92.0, "percent", "92 (92%)"),
        (0.42, "seconds", "0.42 (420ms)"),
        (4.2, "seconds", "4.2 (4.2s)"),
        (536870912.0, "bytes", "536870912 (512MiB)"),
        (1.5, "cores", "1.5 (150% of a core)"),
        (1234567.891, None, "1234568"),
        (float("inf"), "ratio", "+Inf"),
        (1e-9, None, "1e-09"),
    ],
)
def test_values_and_their_unit_readings(value: float, unit: str | None, text: str) -> None:
    assert fmt_value(value, unit) == text


def test_times_and_durations() -> None:
    assert fmt_time(T0) == "2026-07-08 10:00"
    assert fmt_time(T0 + 7) == "2026-07-08 10:00:07"
    assert fmt_time(T0 + 7.25) == "2026-07-08 10:00:07.250"
    assert [fmt_duration(s) for s in (0.5, 1, 90, 3600, 90061)] == ["500ms", "1s", "1m30s", "1h", "1d1h1m1s"]
    assert fmt_number(-0.0) == "0" and fmt_number(float("nan")) == "NaN"
