"""Alerts end to end: the exporter's gauges make Prometheus rules fire, Prometheus notifies a real
Alertmanager, a silence or an inhibition suppresses them, and resolved alerts leave history in
Prometheus' ALERTS series."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from evigate.server.sources.alert_history import AlertHistory, alert_history
from evigate.server.sources.alertmanager import Alertmanager, AmAlert
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.series_text import fmt_time
from tests.sources.conftest import eventually, settings
from tests.sources.exporter import Exporter
from tests.sources.servers import Server

STEP_S = 1  # the alert history's range-query step


@pytest.fixture
async def am(alertmanager_server: Server) -> AsyncIterator[Alertmanager]:
    client = Alertmanager(settings("alertmanager", alertmanager_server.url))
    yield client
    await client.aclose()


@pytest.fixture
async def prom(prometheus_server: Server) -> AsyncIterator[Prometheus]:
    client = Prometheus(settings("prometheus", prometheus_server.url))
    yield client
    await client.aclose()


async def _in_am(am: Alertmanager, service: str, alertname: str, status: str) -> AmAlert | None:
    alerts = [a for a in await am.find(service=service, alertname=alertname) if a.status == status]
    return alerts[0] if alerts else None


async def test_a_firing_alert_reaches_alertmanager_with_annotations_and_current_value(
    am: Alertmanager, prom: Prometheus, exporter: Exporter, service: str
) -> None:
    exporter.error_ratio.labels(service).set(0.25)

    alert = await eventually(
        lambda: _in_am(am, service, "TestHighErrorRate", "firing"), "firing in Alertmanager"
    )

    assert alert.state == "active" and alert.silenced_by == () and alert.inhibited_by == ()
    assert alert.service == service and alert.labels["severity"] == "critical"
    assert alert.summary == f"{service} error ratio is 0.25"
    assert alert.description == f"{service} answers 25% of requests with 5xx"
    assert alert.runbook_url == "https://runbooks.invalid/high-error-rate"
    assert (alert.current, alert.current_from) == ("25%", "annotation:value")
    assert alert.starts_at is not None and alert.fingerprint
    item = alert.item(now=alert.starts_at + timedelta(minutes=25))
    assert list(item)[:5] == ["alert_name", "service", "state", "current", "duration"]
    assert item["state"] == "firing" and item["current"] == "25%" and item["duration"] == "25m"
    assert item["starts_at"] == fmt_time(alert.starts_at.timestamp())
    # Prometheus' own view of the same alert and rule.
    firing = [a for a in await prom.alerts() if a.labels.get("service") == service]
    assert [(a.state, a.value) for a in firing] == [("firing", 0.25)]
    rules = {r.name: r for g in await prom.rules("alerting") for r in g.rules}
    assert rules["TestHighErrorRate"].type == "alerting" and rules["TestHighErrorRate"].health == "ok"
    assert rules["TestSlowResponses"].duration_s == 2


async def test_a_silenced_alert_is_reported_suppressed_by_that_silence(
    am: Alertmanager, alertmanager_server: Server, exporter: Exporter, service: str
) -> None:
    exporter.error_ratio.labels(service).set(0.5)
    await eventually(lambda: _in_am(am, service, "TestHighErrorRate", "firing"), "firing in Alertmanager")
    now = datetime.now(UTC)
    silence = {
        "matchers": [{"name": "service", "value": service, "isRegex": False, "isEqual": True}],
        "startsAt": now.isoformat(),
        "endsAt": (now + timedelta(hours=1)).isoformat(),
        "createdBy": "tests/sources",
        "comment": "maintenance",
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{alertmanager_server.url}/api/v2/silences", json=silence)
    silence_id = response.raise_for_status().json()["silenceID"]

    alert = await eventually(lambda: _in_am(am, service, "TestHighErrorRate", "silenced"), "silenced")

    assert alert.state == "suppressed" and alert.silenced_by == (silence_id,)
    assert alert.item()["silenced_by"] == [silence_id]
    unsilenced = await am.alerts(silenced=False, matchers=[f'service="{service}"'])
    assert unsilenced == []


async def test_an_inhibited_alert_names_the_alert_that_inhibits_it(
    am: Alertmanager, exporter: Exporter, service: str
) -> None:
    exporter.upstream_down.labels(service).set(1)
    exporter.downstream_errors.labels(service).set(3)

    source = await eventually(lambda: _in_am(am, service, "TestUpstreamDown", "firing"), "the source firing")
    target = await eventually(lambda: _in_am(am, service, "TestDownstreamErrors", "inhibited"), "inhibited")

    assert target.state == "suppressed" and target.inhibited_by == (source.fingerprint,)
    assert (target.current, target.current_from) == ("3", "summary")
    assert target.item()["inhibited_by"] == [source.fingerprint]


async def _resolved_history(prom: Prometheus, service: str, start: datetime) -> AlertHistory | None:
    end = datetime.fromtimestamp(math.floor(datetime.now(UTC).timestamp()), UTC)
    found = await alert_history(
        prom, alertname="TestHighErrorRate", service=service, start=start, end=end, step_s=1
    )
    return found[0] if found and found[0].state == "resolved" else None


async def test_a_resolved_alert_is_reported_resolved_with_when_it_stopped(
    am: Alertmanager, prom: Prometheus, exporter: Exporter, service: str
) -> None:
    start = datetime.fromtimestamp(math.floor(datetime.now(UTC).timestamp()), UTC)
    exporter.error_ratio.labels(service).set(0.3)
    await eventually(lambda: _in_am(am, service, "TestHighErrorRate", "firing"), "firing in Alertmanager")

    async def fired() -> AlertHistory | None:
        found = await alert_history(
            prom, alertname="TestHighErrorRate", service=service, start=start, end=datetime.now(UTC), step_s=1
        )
        return found[0] if found else None

    still = await eventually(fired, "the firing alert in ALERTS")
    assert still.state == "firing" and still.resolved_at is None
    assert "state=firing" in still.text() and " to now " in still.text()

    cleared = datetime.now(UTC)
    exporter.error_ratio.labels(service).set(0)

    async def gone() -> bool:
        return not await am.find(service=service) and not [
            a for a in await prom.alerts() if a.labels.get("service") == service
        ]

    await eventually(gone, "the alert gone from Alertmanager and Prometheus")
    history = await eventually(lambda: _resolved_history(prom, service, start), "a resolved history")

    assert history.alertname == "TestHighErrorRate" and history.service == service
    assert history.labels["severity"] == "critical"
    firing = [i for i in history.intervals if i.state == "firing"]
    assert len(firing) == 1 and firing[0].end is not None
    # Gone by the next point (last point seen live + step), or by the last point when that point
    # saw it only by looking back a step.
    assert firing[0].end in (firing[0].last_seen, firing[0].last_seen + timedelta(seconds=1))
    assert history.resolved_at == firing[0].end
    # It stopped after the gauge was cleared, within a scrape, an evaluation and a step.
    assert cleared - timedelta(seconds=1) <= history.resolved_at <= cleared + timedelta(seconds=5)
    text = history.text()
    resolved_at = fmt_time(history.resolved_at.timestamp())
    assert text.startswith(
        f"TestHighErrorRate, service={service}, state=resolved, resolved_at={resolved_at}, "
    )
    assert f"firing {fmt_time(firing[0].start.timestamp())} to {resolved_at} " in text
    assert f"instance={history.labels['instance']}, job=app, severity=critical, window=" in text
    assert text.endswith(", step=1s")


async def test_an_alert_with_a_for_clause_shows_pending_then_firing_and_since_when(
    prom: Prometheus, exporter: Exporter, service: str
) -> None:
    start = datetime.fromtimestamp(math.floor(datetime.now(UTC).timestamp()), UTC)
    exporter.latency.labels(service).set(4.2)

    async def firing() -> AlertHistory | None:
        found = await alert_history(
            prom,
            alertname="TestSlowResponses",
            service=service,
            start=start,
            end=datetime.now(UTC),
            step_s=STEP_S,
        )
        return found[0] if found and found[0].state == "firing" else None

    history = await eventually(firing, "pending then firing")
    states = [i.state for i in history.intervals]
    assert states == ["pending", "firing"]
    pending, fired = history.intervals
    assert pending.start <= fired.start and fired.end is None
    # ALERTS_FOR_STATE holds when the alert became active: the start of its pending phase.
    assert fired.active_since is not None
    # The range query's first pending step is the first 1 s step at or after that instant.
    assert start <= fired.active_since <= pending.start <= fired.active_since + timedelta(seconds=STEP_S)
    assert f"active_since={fmt_time(fired.active_since.timestamp())}" in history.text()


async def test_no_history_when_nothing_fired_in_the_window(prom: Prometheus, service: str) -> None:
    now = datetime.now(UTC)
    assert (
        await alert_history(
            prom, alertname="TestHighErrorRate", service=service, start=now - timedelta(minutes=5), end=now
        )
        == []
    )


async def test_alertmanager_health_reports_version_uptime_and_cluster(am: Alertmanager) -> None:
    health = await am.health()
    assert health.reachable and health.ready
    assert health.version == "0.25.0"
    assert health.started_at is not None and health.started_at <= datetime.now(UTC)
    assert health.detail == "cluster disabled"


async def test_an_alert_shorter_than_the_step_is_still_reported_resolved(
    am: Alertmanager, prom: Prometheus, exporter: Exporter, service: str
) -> None:
    start = datetime.fromtimestamp(math.floor(datetime.now(UTC).timestamp()), UTC)
    exporter.error_ratio.labels(service).set(0.3)
    await eventually(lambda: _in_am(am, service, "TestHighErrorRate", "firing"), "firing in Alertmanager")
    exporter.error_ratio.labels(service).set(0)  # at once: it fires for about a second

    async def resolved() -> AlertHistory | None:
        end = datetime.now(UTC)
        found = await alert_history(
            prom, alertname="TestHighErrorRate", service=service, start=start, end=end, step_s=4
        )
        return found[0] if found and found[0].state == "resolved" else None

    history = await eventually(resolved, "the brief alert in a 4 s step history")
    assert history.window.step == 4 and history.resolved_at is not None
    # Caught by looking back one step from a point it no longer reached: it was gone by that point.
    assert history.resolved_at <= datetime.now(UTC)
