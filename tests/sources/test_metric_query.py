"""A question → the discovered metric it means and its PromQL; a range series' change point."""

from __future__ import annotations

import re

from evigate.server.sources.metric_discovery import Metric
from evigate.server.sources.metric_query import change_point, promql, rank, unit_of
from evigate.server.sources.prom_types import Sample, Series
from evigate.server.sources.scoped_metrics import Scope
from evigate.server.sources.series_text import fmt_time

RESPONSES = Metric(
    "gateway_upstream_responses_total",
    "counter",
    "Responses the gateway returned, by upstream and HTTP status code.",
    ("code", "job", "upstream"),
    'job="gateway"',
    (("code", ("200", "502", "504")), ("job", ("gateway",)), ("upstream", ("fare-search", "order-router"))),
)
ROUTES = Metric(
    "order_router_route_duration_seconds",
    "histogram",
    "",
    ("service", "version"),
    'service="OrderRouter"',
    (("service", ("OrderRouter",)), ("version", ("2.14.0", "2.15.0"))),
)
HIT = Metric("fare_cache_hit_ratio", "gauge", "", ("cache", "job"), 'job="pricing/fare-search"')
AGE = Metric("risk_model_age_seconds", "gauge", "", ("model", "service"), 'service="RiskScorer"')


def test_the_metric_a_question_means_ranks_first() -> None:
    metrics = [RESPONSES, ROUTES, HIT, AGE]
    assert rank("Is OrderRouter 2.15.0 slower than 2.14.0?", metrics)[0][1] is ROUTES
    assert rank("gateway 到 fare-search 的 5xx 比例现在是多少？", metrics)[0][1] is RESPONSES
    assert rank("fare-search 的缓存命中率下降了吗？", metrics)[0][1] is HIT
    assert rank("RiskScorer 的模型多久没有重新训练了？", metrics)[0][1] is AGE
    assert rank("Is the weather nice?", metrics) == []


def test_a_counter_is_an_increase_over_the_window_for_how_many_filtered_by_the_values_named() -> None:
    built = promql(RESPONSES, "How many 5xx responses did the gateway return for fare-search?", "1h")
    assert built.instant
    assert built.expr == (
        'sum (increase(gateway_upstream_responses_total{job="gateway", upstream="fare-search", '
        'code=~"5.."}[1h]))'
    )


def test_a_share_of_a_status_class_is_a_ratio_of_rates() -> None:
    built = promql(RESPONSES, "gateway 到 fare-search 的 5xx 比例是多少？", None)
    assert built.unit == "ratio" and " / sum (rate(" in built.expr
    assert built.expr.endswith('{job="gateway", upstream="fare-search"}[5m]))')


def test_a_histogram_is_a_quantile_grouped_by_the_label_whose_values_the_question_compares() -> None:
    built = promql(ROUTES, "Is OrderRouter 2.15.0 slower than 2.14.0?", "12h")
    assert built.group_by == ("version",) and not built.instant
    assert built.expr == (
        "histogram_quantile(0.99, sum by (le, version) "
        '(rate(order_router_route_duration_seconds_bucket{service="OrderRouter"}[5m])))'
    )
    assert promql(ROUTES, "OrderRouter 新版本的延迟比旧版本高吗？", None).group_by == ("version",)


def test_a_gauge_is_read_as_it_is_and_units_come_from_the_suffix() -> None:
    assert promql(AGE, "how old is the model?", None).expr == 'risk_model_age_seconds{service="RiskScorer"}'
    assert (unit_of(AGE.name), unit_of(HIT.name), unit_of("go_goroutines")) == ("seconds", "ratio", None)


def _series(values: list[float]) -> Series:
    return Series({"__name__": "x"}, tuple(Sample(1_700_000_000 + 60 * i, v) for i, v in enumerate(values)))


def test_a_change_point_states_both_levels_and_when() -> None:
    text = change_point(_series([0.94] * 10 + [0.4] * 10))
    assert text == "change at 2023-11-14 22:23:20 from avg=0.94 to avg=0.4"
    assert change_point(_series([1.0, 1.01, 0.99, 1.0, 1.02, 1.0, 0.99])) is None  # no shift


CHECKOUT = Metric(
    "http_request_duration_seconds",
    "histogram",
    "",
    ("coupon", "instance", "job", "method", "route"),
    'job="checkout"',
    (
        ("coupon", ("none", "promotions")),
        ("instance", ("a:80", "b:80", "c:80")),
        ("job", ("checkout",)),
        ("method", ("POST",)),
        ("route", ("/checkout", "/health")),
    ),
)


def test_a_question_that_asks_why_compares_the_metric_across_each_label_of_a_few_values() -> None:
    why = "The /checkout endpoint is experiencing high latency. Investigate why."
    built = promql(CHECKOUT, why, "1h", compare=True)
    # route is filtered by the value the question names; method has one value; instance is no cause
    assert built.group_by == ("coupon",)
    assert built.expr == (
        "histogram_quantile(0.99, sum by (le, coupon) "
        '(rate(http_request_duration_seconds_bucket{job="checkout", route="/checkout"}[5m])))'
    )
    assert promql(CHECKOUT, "/checkout 接口延迟很高，调查一下原因。", None, compare=True).group_by == (
        "coupon",
    )
    assert promql(CHECKOUT, "What is the latency of /checkout?", None).group_by == ()


CPU = Metric(
    "container_cpu_usage_seconds_total",
    "counter",
    "",
    ("container", "cpu", "namespace", "pod"),
    'namespace="app-1"',
    (("container", ("a", "b")), ("cpu", ("total",)), ("namespace", ("app-1",)), ("pod", ("a-1", "b-1"))),
    scoped=True,
)


def test_a_namespaces_metric_is_grouped_by_the_pod_or_namespace_the_question_names() -> None:
    built = promql(CPU, "Which pods use the most CPU in the app-1 namespace?", None)
    # cpu has one value, the namespace is the scope's: only pod splits the series
    assert built.group_by == ("pod",) and built.unit == "cores"
    assert built.expr == 'sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="app-1"}[5m]))'
    store = Metric(CPU.name, "counter", "", CPU.labels, "", (("namespace", ("a", "b")),), scoped=True)
    assert promql(store, "Show me a graph of CPU per namespace", None).expr == (
        "sum by (namespace) (rate(container_cpu_usage_seconds_total{}[5m]))"
    )


def test_a_ramp_is_stated_from_where_it_left_the_earlier_level() -> None:
    ramp = [0.5] * 12 + [0.5 + 0.5 * i for i in range(1, 9)] + [4.6] * 12
    text = change_point(_series(ramp))
    assert text is not None
    at = _series(ramp).samples[12].t  # the first value above 0.5
    assert text.startswith(f"change at {fmt_time(at)} from avg=0.5 to avg=")


def test_a_namespace_is_found_by_its_label_or_by_a_scrape_address_inside_it() -> None:
    label, address = Scope("app-1").selectors
    assert label == 'namespace="app-1"'
    pattern = re.compile(address.split("=~", 1)[1].strip('"').replace("\\\\", "\\"))
    assert pattern.fullmatch("bidder.app-1.svc.cluster.local:80")
    assert not pattern.fullmatch("bidder.app-10.svc.cluster.local:80")
    assert Scope(None).selectors == ("",)


def test_a_rate_said_in_chinese_meets_a_metric_named_rate() -> None:
    rate = Metric("bid_rate_current", "gauge", "", ("exchange",), 'job="bidder"')
    other = Metric("bid_requests_total", "counter", "", ("exchange",), 'job="bidder"')
    assert rank("出价率有问题吗？", [other, rate])[0][1] is rate
