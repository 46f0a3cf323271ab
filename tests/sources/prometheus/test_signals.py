"""The signal catalog: questions name signals in English or Chinese, templates resolve to real series
(first template with series wins; the service matcher is configurable), and a user file overrides."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evigate.server.sources.evidence import signal_evidence
from evigate.server.sources.matching import ServiceMatch
from evigate.server.sources.prom_types import QueryResult
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.series_text import result_texts
from evigate.server.sources.signals import SignalCatalogError, SignalResult, load_signal_catalog, resolve
from tests.sources.conftest import Store
from tests.sources.exporter import Exporter

CATALOG = load_signal_catalog()


@pytest.mark.parametrize(
    ("question", "signal"),
    [
        ("payment-service 的 CPU 现在多少？", "cpu"),
        ("what is the cpu usage of order-service", "cpu"),
        ("inventory-service 内存使用率", "memory"),
        ("order-service 错误率是多少", "error_rate"),
        ("gateway 5xx ratio now", "error_rate"),
        ("order-service 的 p99 延迟", "latency_p99"),
        ("checkout latency", "latency_p99"),
        ("payment-service 最近重启了吗", "restarts"),
        ("billing 消费延迟", "consumer_lag"),  # longest synonym first: not latency
        ("orders topic 消息堆积", "consumer_lag"),
        ("consumer lag of billing", "consumer_lag"),
        ("gateway qps", "request_rate"),
    ],
)
def test_a_question_names_its_signal(question: str, signal: str) -> None:
    found = CATALOG.detect(question)
    assert found is not None and found.name == signal


@pytest.mark.parametrize(
    "question", ["is the feature flag on?", "payment-service 有告警吗", "deploy history"]
)
def test_no_signal_is_read_into_an_unrelated_question(question: str) -> None:
    assert CATALOG.detect(question) is None


def test_signals_are_found_by_name_or_synonym() -> None:
    found = [CATALOG.get(w) for w in ("cpu", "CPU", "内存", "错误率", "error rate", "堆积")]
    assert [s.name if s else None for s in found] == [
        "cpu", "cpu", "memory", "error_rate", "error_rate", "consumer_lag",
    ]  # fmt: skip
    assert CATALOG.get("disk") is None


def test_every_shipped_template_renders_one_matcher_per_placeholder() -> None:
    for signal in CATALOG.signals.values():
        for template in signal.templates:
            rendered = template.render('service="x"')
            assert "{service}" not in rendered
            assert rendered.count('service="x"') == template.promql.count("{service}")


def test_a_user_file_adds_and_replaces_signals_and_the_service_match(tmp_path: Path) -> None:
    user = tmp_path / "signals.json"
    user.write_text(
        json.dumps(
            {
                "service_match": ["app", {"label": "namespace", "op": "=~", "pattern": "{service}(-prod)?"}],
                "signals": [
                    {
                        "name": "cpu",
                        "synonyms": ["处理器"],
                        "templates": [{"promql": "my_cpu{{service}}", "unit": "cores"}],
                    },
                    {
                        "name": "gc_pause",
                        "synonyms": ["GC", "垃圾回收"],
                        "templates": ["jvm_gc_pause_seconds_max{{service}}"],
                    },
                ],
            }
        )
    )
    catalog = load_signal_catalog(user)
    assert [t.promql for t in catalog.signals["cpu"].templates] == ["my_cpu{{service}}"]
    assert catalog.detect("payment-service 垃圾回收") is catalog.signals["gc_pause"]
    assert "memory" in catalog.signals  # shipped signals stay
    assert [m.selector("pay.svc") for m in catalog.service_matches] == [
        'app="pay.svc"',
        'namespace=~"pay\\\\.svc(-prod)?"',
    ]
    # A signal's own matchers beat the catalog's.
    assert catalog.matches_for(catalog.signals["consumer_lag"])[0].label == "consumergroup"


@pytest.mark.parametrize(
    "data",
    [
        {"signals": [{"name": "x", "templates": ["no_placeholder"]}]},
        {"signals": [{"name": "x", "templates": []}]},
        {"signals": [{"templates": ["a{{service}}"]}]},
        {"service_match": [{"label": "bad-label"}], "signals": []},
        {"nothing": []},
    ],
)
def test_a_malformed_user_file_is_refused_naming_where(tmp_path: Path, data: object) -> None:
    user = tmp_path / "signals.json"
    user.write_text(json.dumps(data))
    with pytest.raises(SignalCatalogError, match=str(user)):
        load_signal_catalog(user)


def test_service_values_are_escaped_for_promql() -> None:
    assert ServiceMatch("service").selector('a"b\\c') == 'service="a\\"b\\\\c"'
    assert ServiceMatch("pod", "=~", "{service}-.*").selector("web.v2") == 'pod=~"web\\\\.v2-.*"'
    assert ServiceMatch("pod", "=~", "{service}-.*").matches({"pod": "web.v2-7d9f-x2k9p"}, "web.v2")
    assert not ServiceMatch("pod", "=~", "{service}-.*").matches({"pod": "webxv2-7d9f"}, "web.v2")


def _answer(found: SignalResult) -> QueryResult:
    assert found.result is not None, f"no series for {found.tried}"
    return found.result


def _last(found: SignalResult) -> float:
    return _answer(found).series[0].samples[-1].v


async def _resolved(prom: Prometheus, name: str, service: str) -> SignalResult | None:
    signal = CATALOG.signals[name]
    result = await resolve(prom, CATALOG, signal, service)
    return result if result.result is not None and result.result.series[0].samples[-1].v > 0 else None


async def test_cpu_resolves_through_the_cadvisor_template(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    cpu = exporter.container_cpu.labels(service, "app")

    async def probe() -> SignalResult | None:
        cpu.inc(0.5)  # a busy container: its counter keeps rising while we wait
        return await _resolved(prom, "cpu", service)

    found = await store.eventually(probe, "cpu via cAdvisor")
    assert found.template is not None and found.template.exporter == "cadvisor"
    # the exact matcher first; a looser one after it only when the scrape landed between two queries
    assert found.tried[0] == found.template.render(f'service="{service}"')
    text = result_texts(_answer(found), name="cpu", unit=found.unit)[0]
    assert text.startswith("cpu{} value=") and "% of a core) at " in text


async def test_cpu_falls_back_to_the_next_template_when_the_first_finds_no_series(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    cpu = exporter.process_cpu.labels(service)

    async def probe() -> SignalResult | None:
        cpu.inc(0.25)
        return await _resolved(prom, "cpu", service)

    found = await store.eventually(probe, "cpu via the process exporter")
    assert found.template is not None and found.template.exporter == "process"
    cadvisor = CATALOG.signals["cpu"].templates[0]
    matches = CATALOG.service_matches
    assert found.tried[: len(matches)] == tuple(cadvisor.render(m.selector(service)) for m in matches)
    # the exact matcher, or (when the scrape landed between two queries) a looser one after it
    assert found.tried[-1] in {found.template.render(m.selector(service)) for m in matches}


async def test_a_signal_with_no_series_reports_every_query_tried(prom: Prometheus, service: str) -> None:
    found = await resolve(prom, CATALOG, CATALOG.signals["memory"], service)
    assert found.result is None and found.template is None
    assert len(found.tried) == len(CATALOG.signals["memory"].templates) * len(CATALOG.service_matches)


async def test_error_rate_is_a_ratio_whose_text_reads_as_a_percentage(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    ok, failed = exporter.requests.labels(service, "200"), exporter.requests.labels(service, "500")

    async def probe() -> SignalResult | None:
        ok.inc(3)  # one request in four fails, scrape after scrape
        failed.inc(1)
        found = await _resolved(prom, "error_rate", service)
        return found if found and abs(_last(found) - 0.25) < 1e-9 else None

    found = await store.eventually(probe, "error rate 25%")
    assert found.unit == "ratio"
    assert "value=0.25 (25%) at " in result_texts(_answer(found), name="error_rate", unit="ratio")[0]


async def test_p99_latency_comes_from_the_histogram(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    histogram = exporter.duration.labels(service)

    async def probe() -> SignalResult | None:
        for seconds in (0.05, 0.2, 0.3, 2.0):
            histogram.observe(seconds)
        return await _resolved(prom, "latency_p99", service)

    found = await store.eventually(probe, "p99 latency")
    value = _last(found)
    assert 1.0 < value <= 2.5  # the p99 falls in the (1, 2.5] bucket
    assert found.unit == "seconds"


async def test_restarts_match_a_service_by_pod_name(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    restarts = exporter.restarts.labels(f"{service}-7d9f8b6c4-x2k9p", "app")
    count = 0

    async def probe() -> SignalResult | None:
        nonlocal count
        count += 1
        restarts.set(count)
        return await _resolved(prom, "restarts", service)

    found = await store.eventually(probe, "restarts via pod name")
    assert 'pod=~"' in found.tried[-1] and len(found.tried) == 4  # service, job, app, then pod


async def test_consumer_lag_sums_a_consumer_groups_partitions(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.lag.labels(f"{service}-consumers", "orders", "0").set(120)
    exporter.lag.labels(f"{service}-consumers", "orders", "1").set(30)

    async def probe() -> SignalResult | None:
        found = await _resolved(prom, "consumer_lag", service)
        return found if found and _last(found) == 150 else None

    found = await store.eventually(probe, "lag 150")
    assert found.tried == (f'sum(kafka_consumergroup_lag{{consumergroup=~"{service}.*"}})',)
    text = result_texts(_answer(found), name="consumer_lag", unit=found.unit)[0]
    assert "value=150 (150 messages) at " in text


async def test_a_signal_resolves_over_a_range(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.memory.labels(service, "app").set(512 * 2**20)
    end = datetime.now(UTC).replace(microsecond=0)

    async def probe() -> SignalResult | None:
        now = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
        found = await resolve(
            prom,
            CATALOG,
            CATALOG.signals["memory"],
            service,
            start=end - timedelta(minutes=1),
            end=now,
            step_s=1,
        )
        return found if found.result is not None else None

    found = await store.eventually(probe, "memory over a range")
    assert found.result is not None and found.result.result_type == "matrix"
    text = result_texts(_answer(found), name="memory", unit=found.unit)[0]
    assert text.startswith("memory{} window=") and "; step=1s; " in text
    assert "last=536870912 (512MiB) at " in text


async def test_signal_evidence_names_the_signal_and_the_service(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    exporter.memory.labels(service, "app").set(300 * 2**20)

    async def probe() -> SignalResult | None:
        found = await resolve(prom, CATALOG, CATALOG.signals["memory"], service)
        return found if found.result is not None else None

    evidence = signal_evidence(await store.eventually(probe, "memory"))
    assert evidence.refs[0]["raw_path"] == "$.series[0]"
    assert evidence.refs[0]["text"].startswith(f"memory{{service={service}}} value=314572800 (300MiB) at ")
    assert evidence.raw["signal"] == "memory" and evidence.raw["exporter"] == "cadvisor"
    assert evidence.raw["tried"][-1] == evidence.raw["query"]  # the spellings tried, up to the answer
    missing = signal_evidence(await resolve(prom, CATALOG, CATALOG.signals["restarts"], service))
    assert missing.refs == [] and len(missing.raw["tried"]) == len(CATALOG.service_matches)
