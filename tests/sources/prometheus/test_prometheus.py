"""The Prometheus HTTP API client against real servers: Prometheus and VictoriaMetrics alike."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest

from evigate.server.queries.types import ToolError
from evigate.server.sources.http import SourceError
from evigate.server.sources.prom_types import QueryResult
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.series_text import fmt_time, fmt_value, result_texts
from evigate.server.sources.sources_config import QueryLimits, SourceSettings
from tests.sources.conftest import Store
from tests.sources.exporter import Exporter


def _now() -> datetime:
    return datetime.now(UTC)


async def _value_is(prom: Prometheus, selector: str, value: float) -> float | None:
    """The time at which the store first shows `value` for `selector` (None until then)."""
    result = await prom.query(selector)
    if result.series and result.series[0].samples[-1].v == value:
        return result.series[0].samples[-1].t
    return None


async def test_instant_query_returns_the_live_value_and_its_ref_text(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.level.labels(service).set(0.039)
    selector = f'test_level{{service="{service}"}}'
    await store.eventually(lambda: _value_is(prom, selector, 0.039), f"{selector} = 0.039 in {store.flavor}")

    result = await prom.query(selector)

    assert result.result_type == "vector"
    assert result.total_series == len(result.series) == 1
    series = result.series[0]
    assert series.name == "test_level"
    assert series.labels["service"] == service and series.labels["job"] == "app"
    text = result_texts(result, unit="ratio")[0]
    sample = series.samples[0]
    assert text == (
        f"test_level{{instance={series.labels['instance']}, job=app, service={service}}} "
        f"value=0.039 (3.9%) at {fmt_time(sample.t)}"
    )


async def test_range_query_ref_text_holds_first_last_min_max_avg_window_and_step(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    selector = f'test_level{{service="{service}"}}'
    gauge = exporter.level.labels(service)

    async def hold(value: float) -> datetime:
        """Set the gauge and wait until a whole-second point holds the value: a 1 s step then sees it."""
        gauge.set(value)
        seen = await store.eventually(partial(_value_is, prom, selector, value), f"value {value} stored")
        point = datetime.fromtimestamp(math.ceil(seen), UTC)

        async def holds() -> bool:
            if datetime.now(UTC) <= point:
                return False
            result = await prom.query(selector, point)
            return bool(result.series) and result.series[0].samples[-1].v == value

        await store.eventually(holds, f"{value} at {point}")
        return point

    start = await hold(1)
    await hold(3)
    end = await hold(2)

    async def settled() -> QueryResult | None:
        # A store may evaluate the window's last point from a slightly older sample (VictoriaMetrics
        # does right after ingestion): wait until the range ends on the value last written.
        result = await prom.query_range(selector, start, end, step_s=1)
        return result if result.series and result.series[0].samples[-1].v == 2 else None

    result = await store.eventually(settled, "the range to end on 2")

    assert result.result_type == "matrix" and result.range is not None
    assert result.range.step == 1
    samples = result.series[0].samples
    values = [s.v for s in samples]
    assert values[0] == 1 and values[-1] == 2 and min(values) == 1 and max(values) == 3
    high = next(s for s in samples if s.v == 3)
    text = result_texts(result)[0]
    assert text.startswith(
        f"test_level{{instance={result.series[0].labels['instance']}, job=app, service={service}}} "
    )
    assert f"window={fmt_time(start.timestamp())} to {fmt_time(end.timestamp())}; step=1s" in text
    assert f"points={len(samples)}" in text
    assert f"first=1 at {fmt_time(samples[0].t)}" in text
    assert f"last=2 at {fmt_time(samples[-1].t)}" in text
    assert f"min=1 at {fmt_time(samples[0].t)}" in text
    assert f"max=3 at {fmt_time(high.t)}" in text
    assert f"avg={fmt_value(sum(values) / len(values))}" in text


async def test_a_step_too_fine_for_the_point_bound_is_raised_and_reported(store: Store) -> None:
    prom = Prometheus(SourceSettings("prometheus", store.url), QueryLimits(max_points=11))
    try:
        end = _now().replace(microsecond=0)
        result = await prom.query_range('up{job="app"}', end - timedelta(seconds=60), end, step_s=1)
    finally:
        await prom.aclose()
    assert result.range is not None and result.range.step == 6
    assert result.notes == ("step raised from 1s to 6s (at most 11 points)",)
    assert all(len(s.samples) <= 11 for s in result.series)


async def test_a_window_past_the_bound_is_refused_naming_the_bound(store: Store) -> None:
    prom = Prometheus(SourceSettings("prometheus", store.url), QueryLimits(max_window_s=3600))
    try:
        with pytest.raises(SourceError) as caught:
            await prom.query_range("up", _now() - timedelta(hours=2), _now())
    finally:
        await prom.aclose()
    assert caught.value.kind == "rejected"
    assert "exceeds the maximum 3600s" in str(caught.value)


async def test_an_oversized_result_is_cut_to_the_bound_with_the_total(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    for shard in range(12):
        exporter.fanout.labels(service, f"{shard:02d}").set(shard)
    selector = f'test_fanout{{service="{service}"}}'

    async def all_stored() -> bool:
        return (await prom.query(selector)).total_series == 12

    await store.eventually(all_stored, "12 fanout series stored")
    result = await prom.query(selector)

    assert result.truncated and result.total_series == 12 and len(result.series) == 5
    assert [s.labels["shard"] for s in result.series] == ["00", "01", "02", "03", "04"]
    assert result.notes == ("12 series, cut to the first 5 by label order",)
    listing = await prom.series([selector])
    assert listing.total == 12 and len(listing.items) == 5


async def test_bad_promql_fails_with_the_servers_own_message(prom: Prometheus, store: Store) -> None:
    with pytest.raises(SourceError) as caught:
        await prom.query("sum(rate(http_requests_total[5m])")
    error = caught.value
    assert isinstance(error, ToolError)  # recorded as a failed tool call, never as no evidence
    assert error.kind == "bad_query"
    if store.flavor == "prometheus":
        assert (error.status, error.error_type) == (400, "bad_data")
        assert "parse error" in error.detail
    else:
        assert error.status == 422 and "unparsed data" in error.detail
    assert str(error).startswith(f"prometheus at {store.url} rejected the query (HTTP {error.status}")
    assert error.detail in str(error)


async def test_series_labels_and_label_values_list_what_is_stored(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.level.labels(service).set(7)
    selector = f'test_level{{service="{service}"}}'
    await store.eventually(lambda: _value_is(prom, selector, 7), "value 7 stored")

    listing = await prom.series([selector])
    assert listing.total == 1
    assert listing.items[0]["__name__"] == "test_level" and listing.items[0]["service"] == service
    assert {"__name__", "instance", "job", "service"} <= set(await prom.labels([selector]))
    assert service in await prom.label_values("service")
    assert await prom.label_values("service", [selector]) == [service]
    with pytest.raises(SourceError, match="not a label name"):
        await prom.label_values("service/../../admin")


async def test_health_reports_a_ready_server(prom: Prometheus, store: Store) -> None:
    health = await prom.health()
    assert health.reachable and health.ready and health.detail is None
    if store.flavor == "prometheus":
        assert health.version == "2.42.0+ds"
        assert health.started_at is not None and health.started_at < _now()
        assert health.line().startswith(f"prometheus {store.url}: ready; version 2.42.0+ds")
    else:  # Debian's VictoriaMetrics 1.79.5 build leaves vm_app_version's labels empty
        assert health.version is None
        assert health.line().startswith(f"prometheus {store.url}: ready; version unknown")


async def test_prometheus_metadata_scalar_and_string_results(
    prometheus_server: object, exporter: Exporter
) -> None:
    prom = Prometheus(SourceSettings("prometheus", prometheus_server.url))  # type: ignore[attr-defined]
    try:
        metadata = {m.metric: m for m in await prom.metadata()}
        scalar = await prom.query("scalar(vector(2.5))")
        string = await prom.query('"hello"')
    finally:
        await prom.aclose()
    assert metadata["test_level"].type == "gauge"
    assert metadata["test_level"].help == "a value the range tests step through"
    assert scalar.result_type == "scalar" and scalar.scalar is not None and scalar.scalar.v == 2.5
    assert result_texts(scalar)[0] == f"scalar(vector(2.5)) scalar=2.5 at {fmt_time(scalar.scalar.t)}"
    assert string.result_type == "string" and string.string is not None and string.string[1] == "hello"
