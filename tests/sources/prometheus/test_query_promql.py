"""query_promql and query_metrics through the tool layer on live sources: SessionToolBox over the
combined backend (alerts / metrics live, logs / knowledge from the bundled files), against real
Prometheus and VictoriaMetrics. Ref texts, the 400 of a bad expression with the server's own
message, a cut result with its total, and a failed (never no-evidence) call for every fault."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from evigate.server.deadline import Deadline
from evigate.server.live_sources import build_sources, build_tools
from evigate.server.settings import Settings
from evigate.server.sources.kinds import add_live_sources
from evigate.server.sources.signals import load_signal_catalog
from evigate.server.sources.sources_config import QueryLimits, SourcesConfig
from evigate.server.tools import SessionToolBox, ToolBackend, build_backend
from evigate.server.tools.calls import ToolCallResult
from tests.sources.conftest import Store, eventually, settings
from tests.sources.exporter import Exporter
from tests.sources.recorder import EMPTY_VECTOR, recording_server
from tests.sources.servers import Server, free_port, start_prometheus
from tests.tools.conftest import MemoryCases, MemoryRecorder

FILES = build_backend(None, MemoryCases())


class Tools:
    def __init__(self, backend: ToolBackend) -> None:
        self.backend = backend
        self.box = SessionToolBox(backend, MemoryRecorder(), "session-live")

    async def call(self, tool: str, **arguments: Any) -> ToolCallResult:
        return await self.box.call(tool, arguments, Deadline.none())

    async def aclose(self) -> None:
        await self.backend.aclose()  # type: ignore[attr-defined]


def _tools(prometheus: str | None, alertmanager: str | None = None, **limits: Any) -> Tools:
    config = SourcesConfig(
        prometheus=settings("prometheus", prometheus) if prometheus else None,
        alertmanager=settings("alertmanager", alertmanager) if alertmanager else None,
        prometheus_limits=QueryLimits(**limits),
    )
    return Tools(add_live_sources(FILES, config, load_signal_catalog()))


@pytest.fixture
async def tools(store: Store) -> AsyncIterator[Tools]:
    t = _tools(store.url, max_series=5)
    yield t
    await t.aclose()


def _texts(result: ToolCallResult) -> list[str]:
    return [r["text"] for r in result.retrieval_details["evidence_refs"]]


async def _found(tools: Tools, **arguments: Any) -> ToolCallResult | None:
    # A session of its own per poll: within one session an identical call is deduped.
    poll = SessionToolBox(tools.backend, MemoryRecorder(), "session-poll")
    result = await poll.call("query_promql", arguments, Deadline.none())
    assert result.status == "success", result.error
    return result if result.retrieval_details["evidence_status"] == "supported" else None


async def test_instant_and_range_queries_give_one_ref_per_series_with_values_and_times(
    tools: Tools, store: Store, exporter: Exporter, service: str
) -> None:
    exporter.level.labels(service).set(42)
    expr = f'test_level{{service="{service}"}}'
    instant = await store.eventually(lambda: _found(tools, query=expr), "the series")
    (text,) = _texts(instant)
    assert (
        text.startswith(f"test_level{{instance=127.0.0.1:{exporter.port}, ")
        and f"service={service}}} " in text
    )
    assert " value=42 at 20" in text
    raw = instant.raw_result or {}
    assert raw["total"] == 1 and raw["result_type"] == "vector" and raw["series"][0]["value"] == 42

    exporter.level.labels(service).set(7)

    async def dropped_to_7() -> ToolCallResult | None:
        found = await _found(tools, query=expr, since="2m", step="1s")
        text = _texts(found)[0] if found is not None else ""
        return found if "; first=42 at " in text and "; last=7 at " in text else None

    ranged = await store.eventually(dropped_to_7, "the range from 42 to 7")
    (text,) = _texts(ranged)
    assert " window=" in text and "; step=1s; points=" in text and "; first=42 at " in text
    assert "; min=7 at " in text and "; max=42 at " in text and "; avg=" in text
    assert (ranged.raw_result or {})["window"]["step"] == "1s"


async def test_a_named_signal_of_a_service_needs_no_promql(
    tools: Tools, store: Store, exporter: Exporter, service: str
) -> None:
    exporter.memory.labels(service, "app").set(3 * 2**30)
    result = await store.eventually(
        lambda: _found(tools, signal="memory", service=service), "the memory signal"
    )
    (text,) = _texts(result)
    assert text.startswith("memory{") and f"service={service}" in text and "(3GiB) at " in text
    assert (result.raw_result or {})["signal"] == "memory"


async def test_a_bad_expression_fails_with_the_servers_own_message(tools: Tools, store: Store) -> None:
    result = await tools.call("query_promql", query="sum(rate(http_requests[5m])")
    assert result.status == "failed" and result.retrieval_details["evidence_status"] == "failed"
    error = result.error or ""
    assert error.startswith(f"prometheus at {store.url} rejected the query (HTTP ")
    # Each server's own parser message, so an LLM retry can correct the expression.
    if store.flavor == "prometheus":
        assert "(HTTP 400, bad_data): " in error and "parse error" in error
    else:
        assert "(HTTP 422, 422): " in error and 'unexpected token ""; want ",", ")"' in error


async def test_more_series_than_the_bound_are_cut_and_the_total_reported(
    tools: Tools, store: Store, exporter: Exporter, service: str
) -> None:
    for shard in range(8):
        exporter.fanout.labels(service, f"s{shard}").set(shard)
    expr = f'test_fanout{{service="{service}"}}'

    async def all_eight() -> ToolCallResult | None:
        found = await _found(tools, query=expr)
        return found if found is not None and (found.raw_result or {})["total"] == 8 else None

    result = await store.eventually(all_eight, "eight series")
    raw = result.raw_result or {}
    assert len(raw["series"]) == len(_texts(result)) == 5 and raw["truncated"] is True
    assert raw["notes"] == ["8 series, cut to the first 5 by label order"]


async def test_no_series_is_no_evidence_naming_the_query(tools: Tools, service: str) -> None:
    result = await tools.call("query_promql", query=f'test_level{{service="{service}-none"}}')
    assert result.status == "success" and result.retrieval_details["evidence_status"] == "no_evidence"
    assert f'query=test_level{{service="{service}-none"}}' in _texts(result)[0]


async def test_a_reference_time_reads_the_store_as_it_was_then(victoria_server: Server, service: str) -> None:
    # A past incident: the series ended two days ago, and "now" is when it ended.
    then = (datetime.now(UTC) - timedelta(days=2)).replace(microsecond=0)
    line = {
        "metric": {"__name__": "test_past_level", "service": service},
        "values": [5, 9],
        "timestamps": [int((then - timedelta(minutes=10)).timestamp() * 1000), int(then.timestamp() * 1000)],
    }
    async with httpx.AsyncClient() as client:
        (await client.post(f"{victoria_server.url}/api/v1/import", json=line)).raise_for_status()
    store = Store("victoria-metrics", victoria_server.url)
    config = SourcesConfig(prometheus=settings("prometheus", victoria_server.url))
    past = Tools(add_live_sources(FILES, config, load_signal_catalog(), reference=then))
    today = Tools(add_live_sources(FILES, config, load_signal_catalog()))
    try:
        assert past.backend.now() == then
        expr = f'test_past_level{{service="{service}"}}'
        instant = await store.eventually(lambda: _found(past, query=expr), "the past sample")
        assert " value=9 at " in _texts(instant)[0]
        ranged = await _found(past, query=expr, since="30m")
        assert ranged is not None and "; first=5 at " in _texts(ranged)[0]
        # the same questions at the wall clock: the series is long gone
        assert await _found(today, query=expr) is None
    finally:
        await past.aclose()
        await today.aclose()


async def test_without_prometheus_the_call_fails_saying_so() -> None:
    files = Tools(FILES)
    result = await files.call("query_promql", signal="cpu", service="payment-service")
    assert result.status == "failed" and (result.error or "").startswith("no Prometheus configured")
    assert result.retrieval_details["evidence_refs"] == []


async def test_query_metrics_live_firing_silenced_then_resolved_with_when(
    alertmanager_server: Server, prometheus_server: Server, exporter: Exporter, service: str
) -> None:
    tools = _tools(prometheus_server.url, alertmanager_server.url)
    args = {"service": service, "alert_name": "TestHighErrorRate", "since": "5m"}

    async def state(wanted: str) -> ToolCallResult | None:
        result = await Tools(tools.backend).call("query_metrics", **args)  # a fresh session: no dedup
        assert result.status == "success", result.error
        texts = _texts(result)
        return result if texts and f"state={wanted}" in texts[0] else None

    try:
        exporter.error_ratio.labels(service).set(0.2)
        firing = await eventually(lambda: state("firing"), "firing")
        assert _texts(firing)[0].startswith(
            f"TestHighErrorRate, service={service}, state=firing, current=20%"
        )
        now = datetime.now(UTC)
        silence = {
            "matchers": [{"name": "service", "value": service, "isRegex": False, "isEqual": True}],
            "startsAt": now.isoformat(), "endsAt": (now + timedelta(hours=1)).isoformat(),
            "createdBy": "tests/sources", "comment": "deploy",
        }  # fmt: skip
        async with httpx.AsyncClient() as client:
            posted = await client.post(f"{alertmanager_server.url}/api/v2/silences", json=silence)
        silence_id = posted.raise_for_status().json()["silenceID"]
        silenced = await eventually(lambda: state("silenced"), "silenced")
        assert f"silenced_by=[{silence_id}]" in _texts(silenced)[0]
        exporter.error_ratio.labels(service).set(0)
        resolved = await eventually(lambda: state("resolved"), "resolved")
        item = (resolved.raw_result or {})["alerts"][0]
        assert f"resolved_at={item['resolved_at']}" in _texts(resolved)[0]
    finally:
        await tools.aclose()


async def test_faults_are_failed_calls_naming_the_source(tmp_path: Path) -> None:
    """A Prometheus stopped mid-session, and a port that never answers (timeout)."""
    server = start_prometheus(tmp_path, exporter_port=free_port(), alertmanager_port=None)
    tools = _tools(server.url)
    try:
        assert (await tools.call("query_promql", query="1 + 1")).status == "success"
        server.stop()
        down = await tools.call("query_promql", query="2 + 2")
        metrics = await tools.call("query_metrics", service="payment-service")
    finally:
        server.stop()
        await tools.aclose()
    assert down.status == metrics.status == "failed"
    assert (down.error or "").startswith(f"prometheus at {server.url} is unreachable: ")
    assert (metrics.error or "").startswith(f"prometheus at {server.url} is unreachable: ")
    assert down.retrieval_details["evidence_refs"] == [] == metrics.retrieval_details["evidence_refs"]

    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(8)
        url = f"http://127.0.0.1:{hole.getsockname()[1]}"
        slow = SourcesConfig(
            prometheus=settings("prometheus", url, connect_timeout_s=0.3, read_timeout_s=0.3)
        )
        blackholed = Tools(add_live_sources(FILES, slow, load_signal_catalog()))
        try:
            timed_out = await blackholed.call("query_promql", signal="cpu", service="payment-service")
        finally:
            await blackholed.aclose()
    assert timed_out.status == "failed"
    assert (timed_out.error or "").startswith(f"prometheus at {url} timed out: no ")


async def test_the_sources_file_auth_reaches_the_server(tmp_path: Path) -> None:
    """`--sources-file` with a bearer token file and basic auth: the headers the servers receive."""
    with recording_server() as prom, recording_server() as am:
        prom.answer("/api/v1/query", EMPTY_VECTOR)
        prom.answer(
            "/api/v1/query_range", {"status": "success", "data": {"resultType": "matrix", "result": []}}
        )
        am.answer("/api/v2/alerts", [])
        (tmp_path / "token").write_text("s3cret-token\n")
        (tmp_path / "sources.yml").write_text(
            f"sources:\n  prometheus: {{url: '{prom.url}', timeout_s: 3,\n"
            f"    bearer_token_file: '{tmp_path / 'token'}'}}\n"
            f"  alertmanager: {{url: '{am.url}', basic_auth: {{username: ops, password: pw}}}}\n"
        )
        settings_ = Settings.of(sources_file=tmp_path / "sources.yml")
        tools = Tools(build_tools(settings_, FILES, build_sources(settings_)))
        try:
            assert (await tools.call("query_promql", query="up")).status == "success"
            assert (await tools.call("query_metrics", service="payment-service")).status == "success"
        finally:
            await tools.aclose()
    assert {h.get("authorization") for _, h in prom.requests} == {"Bearer s3cret-token"}
    assert {h.get("authorization") for _, h in am.requests} == {"Basic b3BzOnB3"}
