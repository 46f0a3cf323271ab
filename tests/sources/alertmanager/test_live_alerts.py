"""query_metrics on live sources: Alertmanager's active alerts plus Prometheus' resolved history."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from evigate.server.queries.types import MetricsQuery, Page, TimeWindow
from evigate.server.sources.alertmanager import Alertmanager
from evigate.server.sources.http import SourceError
from evigate.server.sources.live_alerts import LiveAlerts
from evigate.server.sources.prometheus import Prometheus
from evigate.server.tools.query_metrics import alert_text
from tests.sources.conftest import eventually, settings
from tests.sources.exporter import Exporter
from tests.sources.servers import Server, free_port


def _query(service: str, state: str | None = None, since: datetime | None = None) -> MetricsQuery:
    return MetricsQuery(service, "TestHighErrorRate", state, TimeWindow(since, None), limit=10)


@pytest.fixture
async def live(alertmanager_server: Server, prometheus_server: Server) -> AsyncIterator[LiveAlerts]:
    am = Alertmanager(settings("alertmanager", alertmanager_server.url))
    prom = Prometheus(settings("prometheus", prometheus_server.url))
    yield LiveAlerts(am, prom)
    await am.aclose()
    await prom.aclose()


async def _page(live: LiveAlerts, query: MetricsQuery, state: str) -> Page | None:
    page = await live.query_alerts(query, datetime.now(UTC))
    return page if page.items and page.items[0]["state"] == state else None


async def test_an_alert_is_firing_then_resolved_with_when_it_stopped(
    live: LiveAlerts, exporter: Exporter, service: str
) -> None:
    since = datetime.now(UTC) - timedelta(seconds=5)
    exporter.error_ratio.labels(service).set(0.2)

    page = await eventually(lambda: _page(live, _query(service, since=since), "firing"), "firing")
    assert page.total == 1
    text = alert_text(page.items[0])
    assert text.startswith(f"TestHighErrorRate, service={service}, state=firing, current=20%, duration=")
    assert "summary=" in text and "runbook_url=https://runbooks.invalid/high-error-rate" in text

    exporter.error_ratio.labels(service).set(0)
    page = await eventually(lambda: _page(live, _query(service, since=since), "resolved"), "resolved")
    item = page.items[0]
    assert page.total == 1 and item["alert_name"] == "TestHighErrorRate" and item["service"] == service
    assert item["resolved_at"] and item["source"] == "prometheus ALERTS history"
    text = alert_text(item)
    assert text.startswith(f"TestHighErrorRate, service={service}, state=resolved, duration=")
    assert f"resolved_at={item['resolved_at']}" in text
    # "Is it still firing?" finds nothing firing, and the resolved alert under state=resolved.
    assert (await live.query_alerts(_query(service, "firing", since), datetime.now(UTC))).total == 0
    assert (await live.query_alerts(_query(service, "resolved", since), datetime.now(UTC))).total == 1


async def test_a_silenced_alert_still_counts_as_firing_and_says_it_is_silenced(
    live: LiveAlerts, exporter: Exporter, service: str, alertmanager_server: Server
) -> None:
    exporter.error_ratio.labels(service).set(0.9)
    await eventually(lambda: _page(live, _query(service), "firing"), "firing")
    now = datetime.now(UTC)
    silence = {
        "matchers": [{"name": "service", "value": service, "isRegex": False, "isEqual": True}],
        "startsAt": now.isoformat(), "endsAt": (now + timedelta(hours=1)).isoformat(),
        "createdBy": "tests/sources", "comment": "deploy",
    }  # fmt: skip
    async with httpx.AsyncClient() as client:
        (await client.post(f"{alertmanager_server.url}/api/v2/silences", json=silence)).raise_for_status()

    page = await eventually(lambda: _page(live, _query(service, "firing"), "silenced"), "silenced")
    assert page.total == 1 and "silenced_by" in page.items[0]


async def test_prometheus_alone_reports_firing_alerts_from_history(
    prometheus_server: Server, exporter: Exporter, service: str
) -> None:
    prom = Prometheus(settings("prometheus", prometheus_server.url))
    live = LiveAlerts(None, prom)
    try:
        exporter.error_ratio.labels(service).set(0.4)
        page = await eventually(lambda: _page(live, _query(service), "firing"), "firing from ALERTS")
    finally:
        await prom.aclose()
    assert page.items[0]["source"] == "prometheus ALERTS history" and "resolved_at" not in page.items[0]


async def test_a_down_alertmanager_fails_the_call(prometheus_server: Server, service: str) -> None:
    am = Alertmanager(settings("alertmanager", f"http://127.0.0.1:{free_port()}"))
    prom = Prometheus(settings("prometheus", prometheus_server.url))
    try:
        with pytest.raises(SourceError, match=r"alertmanager at \S+ is unreachable"):
            await LiveAlerts(am, prom).query_alerts(_query(service), datetime.now(UTC))
    finally:
        await am.aclose()
        await prom.aclose()
