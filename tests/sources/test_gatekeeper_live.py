"""Live refs meet the real Gatekeeper: a claim quoting a live alert or series passes, one that
changes a number is rejected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from evigate.rules.rule_catalog import RuleCatalog
from evigate.rules.types import EvidenceRef, InvocationFacts
from evigate.server.queries.types import MetricsQuery, TimeWindow
from evigate.server.sources.alertmanager import Alertmanager
from evigate.server.sources.evidence import signal_evidence
from evigate.server.sources.live_alerts import LiveAlerts
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.signals import SignalResult, resolve
from evigate.server.sources.signals import load_signal_catalog as load_signals
from evigate.server.tools.query_metrics import TOOL as QUERY_METRICS
from evigate.server.tools.tool import Answer
from tests.support.tool_table import check, rule_catalog

from .conftest import Store, eventually, settings
from .exporter import Exporter
from .servers import Server


def _evidence(tool: str, path: str, excerpt: str) -> dict[str, Any]:
    binding = {"tool_name": tool, "source_invocation_id": 1, "raw_path": path, "evidence_excerpt": excerpt}
    claim = {"claim_id": "claim-1", "claim_type": "observation", "claim_text": excerpt,
             "support_level": "direct", "evidence_bindings": [binding]}  # fmt: skip
    return {"answer_version": "executor_evidence_v2", "claims": [claim], "hypotheses": [],
            "recommended_actions": [], "missing_info": []}  # fmt: skip


def _facts(tool: str, refs: list[dict[str, Any]]) -> list[InvocationFacts]:
    return [InvocationFacts(1, tool, tuple(EvidenceRef(r["raw_path"], r["text"]) for r in refs))]


@pytest.fixture
def promql_rules() -> RuleCatalog:
    return rule_catalog()  # the registry knows query_promql's $.series[i]


@pytest.fixture
async def live(alertmanager_server: Server, prometheus_server: Server) -> AsyncIterator[LiveAlerts]:
    am = Alertmanager(settings("alertmanager", alertmanager_server.url))
    prom = Prometheus(settings("prometheus", prometheus_server.url))
    yield LiveAlerts(am, prom)
    await am.aclose()
    await prom.aclose()


async def test_a_claim_quoting_a_live_alert_passes_and_a_changed_value_is_rejected(
    live: LiveAlerts, exporter: Exporter, service: str
) -> None:
    exporter.error_ratio.labels(service).set(0.2)
    query = MetricsQuery(service, "TestHighErrorRate", "firing", TimeWindow(None, None), 10)

    async def firing() -> list[dict[str, Any]] | None:
        page = await live.query_alerts(query, datetime.now(UTC))
        return page.items or None

    items = await eventually(firing, "firing")
    refs = QUERY_METRICS.result(Answer(items, len(items)))[1]["evidence_refs"]
    quoted = f"TestHighErrorRate, service={service}, state=firing, current=20%"
    assert (
        check(_evidence("query_metrics", "$.alerts[0]", quoted), _facts("query_metrics", refs)).status
        == "pass"
    )
    changed = check(
        _evidence("query_metrics", "$.alerts[0]", quoted.replace("20%", "30%")), _facts("query_metrics", refs)
    )
    assert (changed.status, changed.severity) == ("fail", "reject")


async def test_a_claim_quoting_a_live_series_passes_and_a_changed_value_is_rejected(
    prom: Prometheus, exporter: Exporter, service: str, store: Store, promql_rules: RuleCatalog
) -> None:
    signals = load_signals()
    ok, failed = exporter.requests.labels(service, "200"), exporter.requests.labels(service, "500")

    async def quarter() -> SignalResult | None:
        ok.inc(3)
        failed.inc(1)
        found = await resolve(prom, signals, signals.signals["error_rate"], service)
        good = found.result is not None and abs(found.result.series[0].samples[-1].v - 0.25) < 1e-9
        return found if good else None

    evidence = signal_evidence(await store.eventually(quarter, "error rate 25%"))
    text = evidence.refs[0]["text"]
    at = text.rsplit(" at ", 1)[1]
    quoted = f"error_rate{{service={service}}} value=0.25 (25%) at {at}"
    facts = _facts("query_promql", evidence.refs)
    assert check(_evidence("query_promql", "$.series[0]", quoted), facts, promql_rules).status == "pass"
    changed = check(
        _evidence("query_promql", "$.series[0]", quoted.replace("25%", "26%")), facts, promql_rules
    )
    assert (changed.status, changed.severity) == ("fail", "reject")
