"""Metric discovery: a service's own metrics through the Prometheus API, first call and after it.

    python bench/bench_discovery.py [--rounds 50] [--json FILE]

Runs on a VictoriaMetrics loaded with the kestrel world's series (tests/worlds/live.py starts it on a
free loopback port with temporary storage). For each of the world's services: the first discovery
(label values, series, metadata: cold), then `--rounds` more (warm: the per-service cache), then
the whole `about` answer warm (rank the discovered metrics, write the PromQL, run the range
query). The target: warm discovery under 50 ms. In-sample: kestrel's series were looked at while
the discovery was written.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import figures  # noqa: E402
from evigate.server.sources.discovered_metrics import discovered  # noqa: E402
from evigate.server.sources.metric_discovery import MetricDiscovery  # noqa: E402
from evigate.server.sources.prometheus import Prometheus  # noqa: E402
from evigate.server.sources.sources_config import SourceSettings  # noqa: E402
from tests.worlds.judge import DATA_DIRS  # noqa: E402
from tests.worlds.live import start_live_sources  # noqa: E402

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # kestrel's reference time
QUESTIONS = {
    "gateway": "How many 5xx responses did the gateway return for fare-search in the last hour?",
    "order-router": "Is OrderRouter 2.15.0 slower than 2.14.0?",
    "fare-search": "Did the fare cache hit ratio fall?",
    "ledger-sync": "Did ledger_sync retry tasks?",
    "payments-db": "How many connections does payments-db use?",
    "loyalty-points": "Has loyalty.points' memory been growing today?",
    "RiskScorer": "How old is RiskScorer's model?",
    "notify-dispatcher": "How many SMS were rejected?",
}


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {_time(statistics.median(ordered))}, p95 {_time(p95)}"


def _time(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 0.001 else f"{seconds * 1000:.2f} ms"


async def measure(url: str, rounds: int) -> tuple[list[figures.Figure], dict[str, object]]:
    prom = Prometheus(SourceSettings(name="victoria-metrics", url=url))
    discovery = MetricDiscovery(prom)
    cold: list[float] = []
    warm: list[float] = []
    answer: list[float] = []
    found: dict[str, int] = {}
    try:
        for service, question in QUESTIONS.items():
            started = time.perf_counter()
            metrics = await discovery.metrics_of(service, NOW)
            cold.append(time.perf_counter() - started)
            found[service] = len(metrics)
            for _ in range(rounds):
                started = time.perf_counter()
                await discovery.metrics_of(service, NOW)
                warm.append(time.perf_counter() - started)
            for _ in range(max(1, rounds // 10)):
                started = time.perf_counter()
                await discovered(prom, discovery, question, service, NOW - timedelta(hours=12), NOW)
                answer.append(time.perf_counter() - started)
    finally:
        await prom.aclose()
    sample = "in-sample"
    out = [
        figures.Figure("metric discovery, first call per service", _ms(cold), sample, "cold"),
        figures.Figure("metric discovery after the first call (target < 50 ms)", _ms(warm), sample, "warm"),
        figures.Figure("discovered metric answered (rank, PromQL, 12 h range)", _ms(answer), sample, "warm"),
    ]
    return out, {"metrics_per_service": found, "rounds": rounds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=50)
    figures.add_json_flag(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        live = start_live_sources(DATA_DIRS["kestrel"], Path(tmp) / "servers")
        try:
            found, raw = asyncio.run(measure(live.victoria.url, args.rounds))
        finally:
            live.stop()
    for figure in found:
        print(f"{figure.name}: {figure.value} ({figure.sample}, {figure.cache})")
    print(f"metrics per service: {raw['metrics_per_service']}")
    figures.write(
        args.json, "bench_discovery", "metric discovery on VictoriaMetrics (kestrel series)", found, raw
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
