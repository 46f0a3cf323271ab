"""Live-source overhead: what server/sources adds over raw httpx calls to the same endpoints.

    .venv/bin/python bench/bench_sources.py [--runs 300] [--services 20]

Starts Alertmanager, Prometheus and VictoriaMetrics (Debian packages) on free loopback ports with
temporary storage, scraping a small in-process exporter, exactly as tests/sources does. For each
call it alternates the raw request (one pooled httpx.AsyncClient, GET + JSON decode) with the same
request through our client (path guard, envelope check, typed parse, sort, bounds) and, for the
query calls, with the evidence ref texts rendered too. It prints p50 / p99 per call and the paired
overhead (median of our time minus the raw time of the same round). Target: under 5 ms at p50.

Then the tool layer (SessionToolBox: validation, backend, refs, recording into memory) over the same
raw HTTP calls — query_metrics (Alertmanager + the two ALERTS history ranges) and a query_promql
range of a signal — and finally a whole gRPC Chat (in-process server, offline agents, SQLite) that
needs one alert call and one range query, against the live servers and beside the same Chat on the
file backend (where only the alert call runs: no Prometheus, no metric call).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evigate.server.app import App, Components
from evigate.server.deadline import Deadline
from evigate.server.sources.alert_history import alert_history
from evigate.server.sources.alertmanager import Alertmanager
from evigate.server.sources.kinds import add_live_sources
from evigate.server.sources.prom_types import QueryResult, RangeSpec, parse_series
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.series_text import result_texts
from evigate.server.sources.signals import load_signal_catalog
from evigate.server.sources.sources_config import QueryLimits, SourcesConfig, SourceSettings
from evigate.server.tools import SessionToolBox, build_backend
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, session_pb2
from tests.server.conftest import make_settings
from tests.sources.exporter import Exporter
from tests.sources.servers import (
    Server,
    start_alertmanager,
    start_prometheus,
    start_victoria_metrics,
    wait_for,
    wait_scraped,
)
from tests.tools.conftest import MemoryCases, MemoryRecorder

Call = Callable[[], Awaitable[Any]]
Row = tuple[str, float, float, float, float, float]  # name, raw p50 / p99, ours p50 / p99, overhead


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _timed(call: Call) -> float:
    start = time.perf_counter()
    await call()
    return (time.perf_counter() - start) * 1000


async def measure(
    name: str, raw: Call, ours: Call, runs: int
) -> tuple[str, float, float, float, float, float]:
    for _ in range(10):  # warm the pools and the servers' caches
        await raw()
        await ours()
    raw_ms, ours_ms = [], []
    for i in range(runs):
        # Alternate which goes first, so neither always meets a warmer server.
        if i % 2:
            ours_ms.append(await _timed(ours))
            raw_ms.append(await _timed(raw))
        else:
            raw_ms.append(await _timed(raw))
            ours_ms.append(await _timed(ours))
    overhead = statistics.median(o - r for o, r in zip(ours_ms, raw_ms, strict=True))
    return name, _pct(raw_ms, 0.5), _pct(raw_ms, 0.99), _pct(ours_ms, 0.5), _pct(ours_ms, 0.99), overhead


def _populate(exporter: Exporter, services: int) -> None:
    exporter.memory.labels(CHAT_SERVICE, "app").set(3 * 2**30)
    exporter.error_ratio.labels(CHAT_SERVICE).set(0.2)  # its alert fires: the Chat cites it
    for i in range(services):
        service = f"bench-{i:02d}"
        exporter.level.labels(service).set(i / 10)
        exporter.error_ratio.labels(service).set(0.2 if i < 3 else 0)  # three alerts fire


async def bench_store(flavor: str, url: str, runs: int, services: int, raw: httpx.AsyncClient) -> list[Row]:
    prom = Prometheus(SourceSettings("prometheus", url), QueryLimits(max_series=services))
    end = datetime.now(UTC).replace(microsecond=0)
    start = end - timedelta(minutes=2)
    instant = {"query": "test_level"}
    ranged = {
        "query": "test_level",
        "start": f"{start.timestamp():.3f}",
        "end": f"{end.timestamp():.3f}",
        "step": "1",
    }

    async def raw_get(path: str, params: dict[str, str]) -> Any:
        return (await raw.get(url + path, params=params)).json()

    async def ours_instant_texts() -> list[str]:
        return result_texts(await prom.query("test_level"))

    async def ours_range_texts() -> list[str]:
        return result_texts(await prom.query_range("test_level", start, end, 1))

    probe = await prom.query_range("test_level", start, end, 1)
    shape = f"{len(probe.series)}x{max(len(x.samples) for x in probe.series)}pts"
    try:
        return [
            await measure(f"{flavor} query (instant)", lambda: raw_get("/api/v1/query", instant),
                          lambda: prom.query("test_level"), runs),
            await measure(f"{flavor} query + ref texts", lambda: raw_get("/api/v1/query", instant),
                          ours_instant_texts, runs),
            await measure(f"{flavor} query_range {shape}", lambda: raw_get("/api/v1/query_range", ranged),
                          lambda: prom.query_range("test_level", start, end, 1), runs),
            await measure(f"{flavor} query_range {shape} + texts",
                          lambda: raw_get("/api/v1/query_range", ranged), ours_range_texts, runs),
        ]  # fmt: skip
    finally:
        await prom.aclose()


async def bench_alerts(am_url: str, prom_url: str, runs: int, raw: httpx.AsyncClient) -> list[Row]:
    am = Alertmanager(SourceSettings("alertmanager", am_url))
    prom = Prometheus(SourceSettings("prometheus", prom_url))
    end = datetime.now(UTC).replace(microsecond=0)
    start = end - timedelta(minutes=2)
    window = {"start": f"{start.timestamp():.3f}", "end": f"{end.timestamp():.3f}", "step": "1"}
    selector = '{alertname="TestHighErrorRate", service="bench-00"}'

    async def raw_alerts() -> Any:
        return (await raw.get(am_url + "/api/v2/alerts")).json()

    async def ours_alert_items() -> list[dict[str, Any]]:
        return [a.item() for a in await am.alerts()]

    async def raw_history() -> Any:
        # What alert_history asks: ALERTS, then ALERTS_FOR_STATE over the same window.
        for metric in ("ALERTS", "ALERTS_FOR_STATE"):
            (
                await raw.get(prom_url + "/api/v1/query_range", params={"query": metric + selector, **window})
            ).json()

    async def ours_history() -> list[str]:
        found = await alert_history(
            prom, alertname="TestHighErrorRate", service="bench-00", start=start, end=end, step_s=1
        )
        return [h.text() for h in found]

    try:
        return [
            await measure("alertmanager alerts + items", raw_alerts, ours_alert_items, runs),
            await measure("alert history (2 range queries)", raw_history, ours_history, runs),
        ]
    finally:
        await am.aclose()
        await prom.aclose()


CHAT_SERVICE = "payment-service"  # a name the file backend's demo world knows too
CHAT_QUESTION = f"{CHAT_SERVICE} 过去 2 分钟的内存是多少？有告警吗？"


async def bench_tools(am_url: str, prom_url: str, runs: int, raw: httpx.AsyncClient) -> list[Row]:
    """The tool layer over the raw HTTP calls it makes (a fresh session per call: no dedup)."""
    config = SourcesConfig(
        prometheus=SourceSettings("prometheus", prom_url), alertmanager=SourceSettings("alertmanager", am_url)
    )
    catalog = load_signal_catalog()
    backend = add_live_sources(build_backend(None, MemoryCases()), config, catalog)
    end = datetime.now(UTC).replace(microsecond=0)
    window = {"start": f"{(end - timedelta(minutes=2)).timestamp():.3f}", "end": f"{end.timestamp():.3f}"}
    memory = catalog.signals["memory"].templates[0].render(f'service="{CHAT_SERVICE}"')
    history = f'{{service="{CHAT_SERVICE}"}}'

    async def tool(name: str, **arguments: Any) -> None:
        box = SessionToolBox(backend, MemoryRecorder(), "bench")
        result = await box.call(name, arguments, Deadline.none())
        assert result.status == "success", result.error

    async def raw_metrics() -> None:
        (await raw.get(am_url + "/api/v2/alerts")).json()
        for metric in ("ALERTS", "ALERTS_FOR_STATE"):
            params = {"query": metric + history, **window, "step": "1"}
            (await raw.get(prom_url + "/api/v1/query_range", params=params)).json()

    async def raw_memory() -> None:
        params = {"query": memory, **window, "step": "1"}
        (await raw.get(prom_url + "/api/v1/query_range", params=params)).json()

    try:
        return [
            await measure("tool query_metrics (AM + history)", raw_metrics,
                          lambda: tool("query_metrics", service=CHAT_SERVICE, since="2m"), runs),
            await measure("tool query_promql range (signal)", raw_memory,
                          lambda: tool("query_promql", signal="memory", service=CHAT_SERVICE, since="2m",
                                       step="1s"), runs),
        ]  # fmt: skip
    finally:
        await backend.aclose()


async def bench_chat(
    tmp: Path, am_url: str | None, prom_url: str | None, chats: int
) -> tuple[float, float, int]:
    """p50 / p99 of a whole Chat through gRPC, and how many tool calls one Chat made."""
    urls = {"prometheus_url": prom_url or "", "alertmanager_url": am_url or ""}
    app = App(make_settings(tmp, worker_enabled=False, log_level="ERROR", **urls), Components())
    await app.start()
    times: list[float] = []
    calls = 0
    try:
        async with grpc.aio.insecure_channel(app.address) as channel:
            stub = chat_service_pb2_grpc.ChatServiceStub(channel)
            for i in range(chats + 3):
                start = time.perf_counter()
                reply = await stub.Chat(chat_service_pb2.ChatRequest(query=CHAT_QUESTION), timeout=60)
                elapsed = (time.perf_counter() - start) * 1000
                if reply.status != session_pb2.SESSION_STATUS_SUCCESS:
                    raise SystemExit(f"bench_sources: a Chat failed: {reply.failure_reason}")
                if i >= 3:  # the first Chats warm the pools and caches
                    times.append(elapsed)
                assert app.database is not None
                calls = len(await app.database.repo.list_invocations(reply.session_id))
    finally:
        await app.stop(grace=0)
    return _pct(times, 0.5), _pct(times, 0.99), calls


async def main_async(runs: int, services: int, chats: int) -> None:
    started = time.time()
    exporter = Exporter()
    exporter.start()
    _populate(exporter, services)
    servers: list[Server] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            am = start_alertmanager(Path(tmp) / "am")
            servers.append(am)
            prom = start_prometheus(Path(tmp) / "prom", exporter.port, am.port)
            servers.append(prom)
            vm = start_victoria_metrics(Path(tmp) / "vm", exporter.port)
            servers.append(vm)
            wait_scraped(prom)
            wait_scraped(vm)
            wait_for(
                lambda: len(httpx.get(am.url + "/api/v2/alerts").json()) >= 3,
                30,
                "three alerts in Alertmanager",
            )
            # A minute of samples, so a range query carries about 60 points per series.
            wait_for(lambda: time.time() - started > 60, 90, "a minute of samples")
            async with httpx.AsyncClient(timeout=10) as raw:
                rows = await bench_store("prometheus", prom.url, runs, services, raw)
                rows += await bench_store("victoria-metrics", vm.url, runs, services, raw)
                rows += await bench_alerts(am.url, prom.url, runs, raw)
                rows += await bench_tools(am.url, prom.url, runs, raw)
            live = await bench_chat(Path(tmp) / "live", am.url, prom.url, chats)
            files = await bench_chat(Path(tmp) / "files", None, None, chats)
        finally:
            for server in servers:
                server.stop()
            exporter.stop()
    print(f"{runs} rounds per call, {services} series per query, loopback servers")
    print(f"{'call':46} {'raw p50':>8} {'raw p99':>8} {'ours p50':>9} {'ours p99':>9} {'overhead p50':>13}")
    for name, rp50, rp99, op50, op99, over in rows:
        print(f"{name:46} {rp50:7.2f}ms {rp99:7.2f}ms {op50:8.2f}ms {op99:8.2f}ms {over:11.2f}ms")
    print(f"\nChat {CHAT_QUESTION!r}, {chats} runs through gRPC (in-process server, offline agents, SQLite)")
    for name, (p50, p99, calls) in (("live sources", live), ("file backend", files)):
        print(f"{name:14} p50 {p50:7.1f}ms  p99 {p99:7.1f}ms  ({calls} tool calls per Chat)")


def bench_max_answer(limits: QueryLimits) -> None:
    """The guard's largest answer (max_series x max_points), synthetic: decode vs our parse + texts."""
    values = [[1_800_000_000 + j, str(j * 0.5)] for j in range(limits.max_points)]
    result = [{"metric": {"__name__": "m", "i": str(i)}, "values": values} for i in range(limits.max_series)]
    body = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()
    spec = RangeSpec(1_800_000_000, 1_800_000_000 + limits.max_points - 1, 1)
    timings: dict[str, list[float]] = {"json decode (raw)": [], "+ typed parse": [], "+ ref texts": []}
    for _ in range(20):
        start = time.perf_counter()
        data = json.loads(body)["data"]
        decoded = time.perf_counter()
        series = parse_series("matrix", data["result"])
        parsed = time.perf_counter()
        result_texts(QueryResult("m", "matrix", tuple(series), len(series), range=spec))
        done = time.perf_counter()
        timings["json decode (raw)"].append((decoded - start) * 1000)
        timings["+ typed parse"].append((parsed - decoded) * 1000)
        timings["+ ref texts"].append((done - parsed) * 1000)
    print(f"largest allowed answer: {limits.max_series} series x {limits.max_points} points (synthetic)")
    for name, ms in timings.items():
        print(f"{name:36} p50 {statistics.median(ms):7.2f}ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--services", type=int, default=20)
    parser.add_argument("--chats", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.services, args.chats))
    bench_max_answer(QueryLimits())


if __name__ == "__main__":
    main()
