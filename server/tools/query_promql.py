"""query_promql: an instant or range PromQL query, or a named signal of a service (docs/design.md §6.6).

Served by a backend whose sources include a Prometheus-compatible store (server/sources/live.py); the
file backend has none, so the call fails saying so. Every returned series is one evidence ref
`$.series[i]` whose text holds the metric, every label and the values with their times (for a
range: window, step, first / last / min / max with times and avg), so a claim such as "error rate
3.9% at 10:05" is checked like any other excerpt. Faults (down, timeout, HTTP error, a query the
server rejects, with its own message) fail the call; only a query that ran and matched no series
is no evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.queries.types import JSON, PromQLQuery, ToolError
from evigate.server.sources.ports import NO_METRIC_SOURCE
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.args import ArgumentError
from evigate.server.tools.backend import PromQLBackend, ToolBackend
from evigate.server.tools.tool import Answer, Tool
from evigate.server.understanding.cause import asks_cause

_STEP = re.compile(r"^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$")
_STEP_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}


def series_text(item: Mapping[str, Any]) -> str:
    """Fallback line of a series item (the backend's own texts are used when it gives them)."""
    return ", ".join(refs.other_pairs(item, ()))


def _step(text: str) -> float:
    match = _STEP.match(text.strip().lower())
    if match is None or float(match.group(1)) <= 0:
        raise ArgumentError(f'step must be a positive duration such as "30s", "1m" or "300", got {text!r}')
    return float(match.group(1)) * _STEP_SECONDS[match.group(2) or "s"]


def _query(args: JSON, now: Any) -> PromQLQuery:
    if "about" in args:
        return _about(args, now)
    expr, signal, service = args.get("query"), args.get("signal"), args.get("service")
    if (expr is None) == (signal is None):
        raise ArgumentError("give either query (PromQL) or signal (a signal name with a service), not both")
    if signal is not None and service is None:
        raise ArgumentError("signal needs service, e.g. signal=cpu, service=payment-service")
    if expr is not None and service is not None:
        raise ArgumentError("service goes with signal; in free PromQL write the matcher yourself")
    if "since" not in args:
        if "until" in args or "step" in args:
            raise ArgumentError("until and step belong to a range query: give since too")
        at = tool_args.parse_time(args["at"], now, "at") if "at" in args else None
        return PromQLQuery(expr, signal, service, at=at)
    if "at" in args:
        raise ArgumentError("at is the time of an instant query; a range query takes since / until")
    window = tool_args.window(args, now)
    step = _step(args["step"]) if "step" in args else None
    return PromQLQuery(expr, signal, service, start=window.since, end=window.until or now, step_s=step)


def _about(args: JSON, now: Any) -> PromQLQuery:
    """The service's discovered metric the words mean (without a service: a metric of the namespace,
    or of the whole store): over the window when `since` is given."""
    if "query" in args or "signal" in args:
        raise ArgumentError(
            "about goes with service or namespace (no query, no signal), e.g. service=gateway"
        )
    if "service" in args and "namespace" in args:
        raise ArgumentError("about takes service or namespace, not both")
    window = tool_args.window(args, now) if "since" in args else None
    start = window.since if window is not None else None
    end = (window.until if window is not None else None) or now
    service, namespace = args.get("service"), args.get("namespace")
    about = str(args["about"])
    return PromQLQuery(
        None, None, service, start=start, end=end, about=about, namespace=namespace, compare=asks_cause(about)
    )


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    query = _query(args, backend.now())
    if not isinstance(backend, PromQLBackend):
        raise ToolError(NO_METRIC_SOURCE)
    found = await backend.query_promql(query)
    if not found.items:
        # What was asked, so "no series" names the exact expressions (a signal tries several).
        notes = {
            k: refs.text(" | ".join(v) if isinstance(v, list) else v)
            for k, v in found.facts.items()
            if k in ("tried", "notes") and v
        }
        return Answer([], 0, notes=notes)
    return Answer(found.items, found.total, texts=found.texts, extra=found.facts)


TOOL = Tool(
    name=ToolName.QUERY_PROMQL,
    description=(
        "Metric values from Prometheus: free read-only PromQL (query) or a named signal of a service "
        "(signal + service: cpu, memory, error_rate, latency_p99, request_rate, restarts, consumer_lag). "
        "Instant at `at` (default now), or a range with since / until / step. Each series is one ref "
        "with its labels and values (range: first / last / min / max with times, avg); ranges, steps "
        "and the series count are bounded, a cut result reports its total. A rejected query fails "
        "with Prometheus's own message."
    ),
    properties={
        "query": {
            **tool_args.STRING,
            "description": 'PromQL, e.g. sum(rate(http_requests_total{code="500"}[5m]))',
        },
        "signal": {**tool_args.STRING, "description": "a signal name from the catalog, e.g. cpu, error_rate"},
        "service": {**tool_args.STRING, "description": "the service a signal is about, e.g. payment-service"},
        "about": {
            **tool_args.STRING,
            "description": "with service: words of the question; the service's own metrics are "
            "discovered and the one they mean is queried (5xx by upstream, latency by version); "
            "without service, the metrics of a namespace or of the whole store",
        },
        "namespace": {**tool_args.STRING, "description": "with about and no service: a Kubernetes namespace"},
        "at": {**tool_args.STRING, "description": f"time of an instant query: {tool_args.TIME_DOC}"},
        **tool_args.WINDOW,
        "step": {
            **tool_args.STRING,
            "description": 'range resolution, e.g. "30s", "1m" (default: about 250 points)',
        },
    },
    answer=_answer,
    item_array="series",
    item_text=series_text,
    no_evidence_message="未找到匹配的指标序列",
    query_keys=("query", "signal", "service", "about", "namespace"),
)
