"""Faults are evidence too: each failure is a SourceError naming the source, its URL and what
happened — never an empty answer that could pass for "no evidence"."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from evigate.server.queries.types import ToolError
from evigate.server.sources.alertmanager import Alertmanager
from evigate.server.sources.health import check_sources
from evigate.server.sources.http import SourceError
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.sources_config import BasicAuth, SourceSettings, sources_config
from tests.server.certs import make_certs

from .recorder import EMPTY_VECTOR, Recorder, recording_server
from .servers import free_port, start_alertmanager, start_prometheus


@pytest.fixture
def blackhole() -> Iterator[str]:
    """A port whose socket listens but never accepts: connections queue in the backlog and no byte
    ever comes back."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with recording_server() as r:
        yield r


async def test_a_prometheus_stopped_mid_session_fails_as_unreachable(tmp_path: Path) -> None:
    server = start_prometheus(tmp_path, exporter_port=free_port(), alertmanager_port=None)
    prom = Prometheus(SourceSettings("prometheus", server.url))
    try:
        assert (await prom.query("1 + 1")).scalar is not None
        server.stop()
        with pytest.raises(SourceError) as caught:
            await prom.query("1 + 1")
        health = await prom.health()
    finally:
        server.stop()
        await prom.aclose()
    error = caught.value
    assert isinstance(error, ToolError) and error.kind == "unreachable"
    assert str(error).startswith(f"prometheus at {server.url} is unreachable: ")
    assert not health.reachable and health.line().startswith(f"prometheus {server.url}: UNREACHABLE")


async def test_an_alertmanager_stopped_mid_session_fails_as_unreachable(tmp_path: Path) -> None:
    server = start_alertmanager(tmp_path)
    am = Alertmanager(SourceSettings("alertmanager", server.url))
    try:
        assert await am.alerts() == []
        server.stop()
        with pytest.raises(SourceError) as caught:
            await am.alerts()
    finally:
        server.stop()
        await am.aclose()
    assert caught.value.kind == "unreachable"
    assert str(caught.value).startswith(f"alertmanager at {server.url} is unreachable: ")


async def test_a_blackholed_port_fails_as_a_timeout_naming_the_source(blackhole: str) -> None:
    slow = SourceSettings("prometheus", blackhole, connect_timeout_s=0.3, read_timeout_s=0.3)
    prom = Prometheus(slow)
    am = Alertmanager(SourceSettings("alertmanager", blackhole, read_timeout_s=0.3))
    try:
        with pytest.raises(SourceError) as caught:
            await prom.query("up")
        with pytest.raises(SourceError) as am_caught:
            await am.alerts()
        health = await am.health()
    finally:
        await prom.aclose()
        await am.aclose()
    assert caught.value.kind == "timeout" and am_caught.value.kind == "timeout"
    assert str(caught.value) == (
        f"prometheus at {blackhole} timed out: no read answer within the timeout (connect 0.3s, read 0.3s)"
    )
    assert not health.reachable and "timed out" in (health.detail or "")


async def test_bearer_token_and_basic_auth_headers_are_sent(recorder: Recorder, tmp_path: Path) -> None:
    recorder.answer("/api/v1/query", EMPTY_VECTOR)
    recorder.answer("/api/v2/alerts", [])
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    config = sources_config(
        prometheus_url=recorder.url,
        env={"EVIGATE_ALERTMANAGER_URL": recorder.url},
        file_sections={
            "prometheus": {"bearer_token_file": str(token_file)},
            "alertmanager": {"basic_auth": {"username": "ops", "password": "pa:ss"}},
        },
    )
    assert config.prometheus is not None and config.alertmanager is not None
    prom, am = Prometheus(config.prometheus), Alertmanager(config.alertmanager)
    try:
        await prom.query("up")
        await am.alerts()
    finally:
        await prom.aclose()
        await am.aclose()
    (_, prom_headers), (_, am_headers) = recorder.requests
    assert prom_headers["authorization"] == "Bearer s3cret-token"
    assert am_headers["authorization"] == "Basic " + base64.b64encode(b"ops:pa:ss").decode()


async def test_a_ca_bundle_verifies_an_https_source(tmp_path: Path) -> None:
    certs = make_certs(tmp_path)
    with recording_server(certs.server_cert, certs.server_key) as https:
        https.answer("/api/v1/query", EMPTY_VECTOR)
        trusted = Prometheus(SourceSettings("prometheus", https.url, ca_bundle=str(certs.ca)))
        untrusted = Prometheus(SourceSettings("prometheus", https.url, ca_bundle=str(certs.other_ca)))
        try:
            assert (await trusted.query("up")).series == ()
            with pytest.raises(SourceError) as caught:
                await untrusted.query("up")
        finally:
            await trusted.aclose()
            await untrusted.aclose()
    assert caught.value.kind == "unreachable" and "CERTIFICATE_VERIFY_FAILED" in str(caught.value)


async def test_http_errors_keep_the_status_and_the_servers_message(recorder: Recorder) -> None:
    recorder.answer(
        "/api/v1/query", {"status": "error", "errorType": "timeout", "error": "query timed out"}, 503
    )
    recorder.answer("/api/v2/alerts", b"upstream connect error", 502)
    prom = Prometheus(SourceSettings("prometheus", recorder.url))
    am = Alertmanager(SourceSettings("alertmanager", recorder.url))
    try:
        with pytest.raises(SourceError) as prom_caught:
            await prom.query("up")
        with pytest.raises(SourceError) as am_caught:
            await am.alerts()
    finally:
        await prom.aclose()
        await am.aclose()
    assert (prom_caught.value.kind, prom_caught.value.status) == ("http_status", 503)
    assert (
        str(prom_caught.value) == f"prometheus at {recorder.url} answered HTTP 503, timeout: query timed out"
    )
    assert str(am_caught.value) == f"alertmanager at {recorder.url} answered HTTP 502: upstream connect error"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html>proxy login</html>", "not JSON"),
        ({"data": []}, "no success envelope"),
        ({"status": "success", "data": {"resultType": "vector", "result": [{"value": "x"}]}}, "unexpected"),
    ],
)
async def test_an_unusable_answer_is_a_bad_response(recorder: Recorder, body: object, expected: str) -> None:
    recorder.answer("/api/v1/query", body)
    prom = Prometheus(SourceSettings("prometheus", recorder.url))
    try:
        with pytest.raises(SourceError) as caught:
            await prom.query("up")
    finally:
        await prom.aclose()
    assert caught.value.kind == "bad_response" and expected in str(caught.value)


async def test_an_answer_past_the_byte_bound_is_refused(recorder: Recorder) -> None:
    big = {"status": "success", "data": {"resultType": "vector", "result": []}, "pad": "x" * 5000}
    recorder.answer("/api/v1/query", big)
    prom = Prometheus(SourceSettings("prometheus", recorder.url))
    prom.http.max_bytes = 1000
    try:
        with pytest.raises(SourceError) as caught:
            await prom.query("up")
    finally:
        await prom.aclose()
    assert caught.value.kind == "too_large"


async def test_write_and_admin_endpoints_are_never_sent(recorder: Recorder) -> None:
    prom = Prometheus(SourceSettings("prometheus", recorder.url))
    try:
        for path in (
            "/api/v1/admin/tsdb/delete_series",
            "/-/quit",
            "/api/v1/write",
            "/api/v1/query/../admin",
        ):
            with pytest.raises(SourceError) as caught:
                await prom.http.get_json(path)
            assert caught.value.kind == "rejected"
    finally:
        await prom.aclose()
    assert recorder.requests == []


async def test_check_sources_lists_each_source_with_its_state(recorder: Recorder, blackhole: str) -> None:
    recorder.answer("/-/ready", b"Prometheus Server is Ready.")
    recorder.answer("/api/v1/status/buildinfo", {"status": "success", "data": {"version": "9.9.9"}})
    config = sources_config(
        prometheus_url=recorder.url,
        alertmanager_url=blackhole,
        file_sections={"alertmanager": {"timeout_s": 0.3}},
    )
    prom_health, am_health = await check_sources(config)
    assert prom_health.reachable and prom_health.ready and prom_health.version == "9.9.9"
    assert prom_health.line() == f"prometheus {recorder.url}: ready; version 9.9.9"
    assert not am_health.reachable and am_health.name == "alertmanager"


VM_BUILD = "victoria-metrics-20230313-tags-v1.89.1-0-gabc"


@pytest.mark.parametrize(
    ("labels", "shown"),
    [
        (
            'version="victoria-metrics-20230313-tags-v1.89.1-0-gabc", short_version="v1.89.1"',
            "version v1.89.1",
        ),
        (
            'version="victoria-metrics-20230313-tags-v1.89.1-0-gabc", short_version=""',
            "version victoria-metrics",
        ),
        ('version="", short_version=""', "version unknown"),  # a distribution build names none
    ],
)
async def test_victoria_metrics_tells_its_version_in_its_own_metrics(
    recorder: Recorder, labels: str, shown: str
) -> None:
    recorder.answer("/health", b"OK")  # no /-/ready: VictoriaMetrics
    recorder.answer("/api/v1/status/buildinfo", {"status": "success", "data": {}})
    recorder.answer("/metrics", f"vm_rows 3\nvm_app_version{{{labels}}} 1\n".encode())
    (health,) = await check_sources(sources_config(prometheus_url=recorder.url))
    assert health.ready
    assert health.line().startswith(f"prometheus {recorder.url}: ready; {shown}")


async def test_a_server_that_names_no_version_shows_version_unknown(recorder: Recorder) -> None:
    recorder.answer("/-/ready", b"Prometheus Server is Ready.")
    recorder.answer("/api/v1/status/buildinfo", {"status": "success", "data": {}})
    (health,) = await check_sources(sources_config(prometheus_url=recorder.url))
    assert health.version is None
    assert health.line() == f"prometheus {recorder.url}: ready; version unknown"


def test_settings_describe_hides_secrets() -> None:
    s = SourceSettings("prometheus", "http://127.0.0.1:9090/", bearer_token="tok", read_timeout_s=3)
    assert s.describe() == {
        "url": "http://127.0.0.1:9090",
        "connect_timeout_s": 2.0,
        "read_timeout_s": 3,
        "auth": "bearer",
        "ca_bundle": None,
        "insecure_skip_verify": False,
    }
    assert "tok" not in repr(s) and "pw" not in repr(
        SourceSettings("a", "http://x", basic_auth=BasicAuth("u", "pw"))
    )
