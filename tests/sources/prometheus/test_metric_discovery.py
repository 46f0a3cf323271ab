"""A service's own metrics, discovered through the Prometheus API of Prometheus and VictoriaMetrics."""

from __future__ import annotations

from datetime import UTC, datetime

from evigate.server.sources.discovered_metrics import discovered
from evigate.server.sources.evidence import PromqlEvidence
from evigate.server.sources.metric_discovery import Metric, MetricDiscovery
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.scoped_metrics import Scope, discovered_in
from tests.sources.conftest import Store
from tests.sources.exporter import Exporter


async def test_a_services_counters_and_histograms_are_found_by_how_the_store_spells_it(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    spelled = service.replace("-", "_").upper()  # the store's spelling: SVC_1A2B3C4D
    exporter.requests.labels(spelled, "502").inc()
    exporter.duration.labels(spelled).observe(0.3)

    async def probe() -> list[Metric] | None:
        found = await MetricDiscovery(prom).metrics_of(service, datetime.now(UTC))
        names = {m.name for m in found}
        wanted = {"http_requests_total", "http_request_duration_seconds"}
        return found if wanted <= names else None

    found = {m.name: m for m in await store.eventually(probe, "the service's metrics")}
    assert found["http_requests_total"].kind == "counter"
    assert found["http_request_duration_seconds"].kind == "histogram"  # one family, not _bucket / _count
    assert "http_request_duration_seconds_bucket" not in found
    assert found["http_requests_total"].selector == f'service="{spelled}"'
    assert ("code", ("502",)) in found["http_requests_total"].label_values


async def test_discovery_is_cached_per_service(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.requests.labels(service, "200").inc()
    now = [0.0]
    discovery = MetricDiscovery(prom, ttl_s=60, clock=lambda: now[0])

    async def probe() -> list[Metric] | None:
        now[0] += 61  # past the cache's life, until the scrape lands
        return await discovery.metrics_of(service, datetime.now(UTC)) or None

    first = await store.eventually(probe, "the service's metrics")
    await prom.aclose()  # a second question about the service sends no request
    assert await discovery.metrics_of(service, datetime.now(UTC)) is first


async def test_the_metric_a_question_means_is_queried_and_cited(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.requests.labels(service, "503").inc(3)

    async def probe() -> PromqlEvidence | None:
        found = await discovered(
            prom, MetricDiscovery(prom), f"how many 503 requests did {service} fail?", service, None,
            datetime.now(UTC),
        )  # fmt: skip
        return found if found.refs else None

    found = await store.eventually(probe, "the discovered counter")
    assert found.raw["metric"] == "http_requests_total"
    assert found.raw["query"] == f'sum (rate(http_requests_total{{service="{service}", code="503"}}[5m]))'
    assert "is a counter" in found.raw["why"]


async def test_a_question_that_names_no_service_lists_or_queries_the_stores_metrics(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.requests.labels(service, "200").inc(5)
    exporter.requests.labels(service, "504").inc(2)
    discovery = MetricDiscovery(prom, ttl_s=0)

    async def listed() -> PromqlEvidence | None:
        found = await discovered_in(
            prom, discovery, "Which http metrics are collected?", Scope(None), None, datetime.now(UTC)
        )
        return found if any(r["text"] == "http_requests_total (counter)" for r in found.refs) else None

    assert (await store.eventually(listed, "the store's metric names")).raw["listed"] is True

    async def compared() -> PromqlEvidence | None:
        found = await discovered_in(
            prom, discovery, "http requests by code: which code has the most?", Scope(None), None,
            datetime.now(UTC),
        )  # fmt: skip
        codes = {s["labels"].get("code") for s in found.raw["series"]}
        return found if {"200", "504"} <= codes else None

    found = await store.eventually(compared, "the requests by code")
    assert found.raw["query"].startswith("topk(10, sum by (code) (rate(http_requests_total")
