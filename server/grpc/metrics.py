"""Prometheus metrics on their own HTTP port; one registry per App so in-process tests stay apart."""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

log = logging.getLogger("evigate.metrics")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class RpcStats(Collector):
    """`evigate_rpc_total` and `evigate_rpc_latency_seconds` by method and code.

    Recorded on every call, so kept as plain numbers that only the event-loop thread updates;
    prometheus_client's own metric children take a lock on every update (three per call), a
    measurable share of a short RPC. The exposition thread renders them when scraped; a scrape
    copies each series under the GIL, and the count is the sum of the buckets, so a scraped
    histogram is always consistent with itself."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self._bounds = buckets
        self._les: list[str] = [floatToGoString(bound) for bound in buckets]  # type: ignore[no-untyped-call]
        # (method, code) -> [count in each bucket (the last: above every bound)..., sum of seconds]
        self._series: dict[tuple[str, str], list[float]] = {}

    def observe(self, method: str, code: str, seconds: float) -> None:
        series = self._series.get((method, code))
        if series is None:
            series = self._series[(method, code)] = [0.0] * (len(self._bounds) + 2)
        series[bisect_left(self._bounds, seconds)] += 1  # the first bucket whose bound is >= seconds
        series[-1] += seconds

    def collect(self) -> Iterable[Metric]:
        calls = CounterMetricFamily(
            "evigate_rpc", "RPCs handled, by method and status code", labels=["method", "code"]
        )
        latency = HistogramMetricFamily(
            "evigate_rpc_latency_seconds", "RPC latency by method and status code", labels=["method", "code"]
        )
        for (method, code), series in list(self._series.items()):
            counts = list(series)
            cumulative, buckets = 0.0, []
            for le, count in zip([*self._les, "+Inf"], counts[:-1], strict=True):
                cumulative += count
                buckets.append((le, cumulative))
            calls.add_metric([method, code], cumulative)
            latency.add_metric([method, code], buckets, sum_value=counts[-1])
        yield calls
        yield latency


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rpc = RpcStats(LATENCY_BUCKETS)
        r.register(self.rpc)
        self.stage_latency = Histogram(
            "evigate_stage_latency_seconds",
            "Pipeline stage latency",
            ["stage"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.gatekeeper = Counter(
            "evigate_gatekeeper_results", "Gatekeeper results by severity", ["severity"], registry=r
        )
        self.verdicts = Counter("evigate_verdicts", "Verdicts of executor rounds", ["verdict"], registry=r)
        self.tool_calls = Counter(
            "evigate_tool_calls", "Tool calls by tool and status", ["tool", "status"], registry=r
        )
        self.answer_check_rejections = Counter(
            "evigate_answer_check_rejections",
            "Composer outputs the answer check refused, by rule",
            ["rule"],
            registry=r,
        )
        self.refused_sentences = Counter(
            "evigate_refused_sentences",
            "Sentences of Composer outputs the sentence check refused, by rule",
            ["rule"],
            registry=r,
        )
        self.sessions = Counter(
            "evigate_sessions", "Sessions ended, by status and reason", ["status", "reason"], registry=r
        )
        self.jobs = Gauge("evigate_jobs", "Evaluation job queue depth by state", ["state"], registry=r)
        self.oldest_job = Gauge(
            "evigate_jobs_oldest_pending_age_seconds", "Age of the oldest pending job", registry=r
        )
        self.llm_opinion_disagreements = Counter(
            "evigate_llm_opinion_disagreements",
            "LLM opinion items contradicted by code (Gatekeeper, verdict constraints, answer check)",
            ["item"],
            registry=r,
        )
        self.database_up = Gauge("evigate_database_up", "1 while the database answers pings", registry=r)
        self._server: Any = None

    def observe_rpc(self, method: str, code: str, seconds: float) -> None:
        self.rpc.observe(method, code, seconds)

    def observe_stage_latencies(self, latencies: Iterable[Any]) -> None:
        for item in latencies:
            if isinstance(item, dict) and isinstance(item.get("latency_ms"), int | float):
                self.stage_latency.labels(str(item.get("stage", "?"))).observe(
                    float(item["latency_ms"]) / 1000
                )

    def observe_event(self, kind: str, data: Any) -> None:
        """One pipeline stage event (see server.pipeline.StageEvent)."""
        if not isinstance(data, dict):
            return
        if kind == "tool_invocation":
            self.tool_calls.labels(str(data.get("tool_name", "?")), str(data.get("status", "?"))).inc()
        elif kind == "gatekeeper_result":
            self.gatekeeper.labels(str(data.get("severity", "?"))).inc()
        elif kind == "verdict":
            self.verdicts.labels(str(data.get("verdict", "?"))).inc()

    def observe_answer_check(self, record: Any) -> None:
        """Each refused Composer output counts once per rule it broke; each refused sentence (and
        each refused slot sentence of the model's) once per rule it broke."""
        if not isinstance(record, dict):
            return
        for rejection in record.get("rejections") or []:
            if isinstance(rejection, dict):
                rules = {
                    str(v.get("rule_id")) for v in rejection.get("violations") or [] if isinstance(v, dict)
                }
                for rule in sorted(rules):
                    self.answer_check_rejections.labels(rule).inc()
                refused = {
                    (str(v.get("rule_id")), str(v.get("field")))
                    for v in rejection.get("violations") or []
                    if isinstance(v, dict) and str(v.get("field", "")).startswith("sentences[")
                }
                for rule, _ in sorted(refused):
                    self.refused_sentences.labels(rule).inc()
        slots = record.get("slots")
        for refused_slot in (slots.get("refused_slots") or []) if isinstance(slots, dict) else []:
            for rule in (
                dict.fromkeys(refused_slot.get("rules") or []) if isinstance(refused_slot, dict) else ()
            ):
                self.refused_sentences.labels(str(rule)).inc()

    def set_job_stats(self, pending: int, running: int, failed: int, done: int, oldest: float) -> None:
        for state, value in (("pending", pending), ("running", running), ("failed", failed), ("done", done)):
            self.jobs.labels(state).set(value)
        self.oldest_job.set(oldest)

    def serve(self, host: str, port: int) -> int:
        """Starts the exposition endpoint; returns the bound port."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        self._server = server
        bound = int(server.server_address[1])
        log.info("metrics endpoint listening", extra={"address": f"http://{host}:{bound}/metrics"})
        return bound

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
