"""A small exporter in the test process: gauges and counters the tests set, scraped every second.

Metric names follow the exporters the signal catalog knows (cAdvisor, process, kube-state-metrics,
HTTP histograms, kafka_exporter), so signals resolve to real series.
"""

from __future__ import annotations

from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    start_http_server,
)

from .servers import free_port

# No *_created series: they would double every counter in series listings.
disable_created_metrics()  # type: ignore[no-untyped-call]


class Exporter:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.error_ratio = Gauge("test_error_ratio", "5xx share", ["service"], registry=r)
        self.latency = Gauge("test_latency_seconds", "p99 latency", ["service"], registry=r)
        self.upstream_down = Gauge("test_upstream_down", "upstream down", ["service"], registry=r)
        self.downstream_errors = Gauge("test_downstream_errors", "downstream errors", ["service"], registry=r)
        self.fanout = Gauge("test_fanout", "many series of one metric", ["service", "shard"], registry=r)
        self.level = Gauge("test_level", "a value the range tests step through", ["service"], registry=r)
        self.container_cpu = Counter(
            "container_cpu_usage_seconds", "cAdvisor CPU", ["service", "container"], registry=r
        )
        self.process_cpu = Counter("process_cpu_seconds", "process CPU", ["service"], registry=r)
        self.memory = Gauge(
            "container_memory_working_set_bytes", "cAdvisor memory", ["service", "container"], registry=r
        )
        self.requests = Counter("http_requests", "HTTP requests", ["service", "code"], registry=r)
        self.duration = Histogram(
            "http_request_duration_seconds", "HTTP latency", ["service"], registry=r,
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5),
        )  # fmt: skip
        self.restarts = Gauge(
            "kube_pod_container_status_restarts_total", "restarts", ["pod", "container"], registry=r
        )
        self.lag = Gauge(
            "kafka_consumergroup_lag", "lag", ["consumergroup", "topic", "partition"], registry=r
        )
        self.port = free_port()
        self._server: WSGIServer | None = None

    def start(self) -> None:
        self._server, _ = start_http_server(self.port, addr="127.0.0.1", registry=self.registry)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
