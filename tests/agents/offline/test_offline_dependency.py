"""Follow the dependency: a question about what a service depends on, whose evidence names another
known service, gathers that service's alerts and log patterns once."""

from __future__ import annotations

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, PlannedCall
from evigate.server.agents.offline.dependency import asks_dependency, follow_up_calls, named_dependency
from evigate.server.sources.services import CatalogView
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.entities import extract

VIEW = CatalogView({name: ("log",) for name in ("cdn-shield", "transcoder", "auth-broker", "profile-store")})
AVAILABLE = {ToolName.QUERY_METRICS, ToolName.QUERY_LOGS, SUMMARIZE_LOGS}


def _result(service: str, *texts: str) -> tuple[PlannedCall, ToolCallResult]:
    refs = [{"raw_path": f"$.items[{i}]", "text": text} for i, text in enumerate(texts)]
    call = PlannedCall(SUMMARIZE_LOGS, {"service": service}, service, purpose="survey")
    return call, ToolCallResult(
        1, SUMMARIZE_LOGS, call.arguments, "success", None, None, {"evidence_refs": refs}
    )


def test_the_service_an_address_in_the_evidence_names_is_followed() -> None:
    question = "cdn-shield 的上游服务怎么了？"
    results = [
        _result(
            "cdn-shield", 'upstream timed out, upstream: "http://transcoder.media.svc.cluster.local:8080/v/1"'
        )
    ]
    calls = follow_up_calls(question, extract(question, VIEW), results, VIEW, AVAILABLE)
    assert {call.service for call in calls} == {"transcoder"}
    assert {call.tool_name for call in calls} == {ToolName.QUERY_METRICS, SUMMARIZE_LOGS}


def test_a_peer_field_and_the_asked_service_itself() -> None:
    own = _result("auth-broker", "peer=auth-broker.accounts.svc.cluster.local:443")
    peer = _result("auth-broker", '"peer": "profile-store.accounts.svc.cluster.local:6379"')
    assert named_dependency([own], ["auth-broker"], VIEW) is None
    assert named_dependency([own, peer], ["auth-broker"], VIEW) == "profile-store"
    assert named_dependency([_result("x", "upstream=transcoder code=504")], [], VIEW) == "transcoder"


def test_only_a_question_about_a_dependency_is_followed() -> None:
    results = [_result("cdn-shield", "upstream: http://transcoder.media.svc.cluster.local:8080")]
    question = "Does cdn-shield log errors?"
    assert not asks_dependency(question)
    assert follow_up_calls(question, extract(question, VIEW), results, VIEW, AVAILABLE) == []
    assert asks_dependency("OrderRouter 依赖的数据库怎么了？") and asks_dependency("Which upstream is it?")


def test_at_the_time_the_dependency_is_read_around_the_evidence_that_named_it() -> None:
    question = "invoice-runner 凌晨连不上的数据库当时怎么了？"
    view = CatalogView({name: ("log",) for name in ("invoice-runner", "billing-db")})
    named = _result(
        "invoice-runner",
        'template="batch <*> failed: host "billing-db.billing.svc.cluster.local"" count=10 '
        "first=2026-12-01 02:49:00 last=2026-12-01 03:08:30 levels=ERROR",
    )
    calls = follow_up_calls(question, extract(question, view), [named], view, AVAILABLE)
    (logs,) = [call for call in calls if call.tool_name == SUMMARIZE_LOGS]
    assert logs.service == "billing-db"
    assert logs.arguments == {
        "service": "billing-db",
        "level": "INFO",
        "since": "2026-12-01T02:39:00Z",
        "until": "2026-12-01T03:18:30Z",
    }


def test_a_host_and_port_of_a_service_known_by_that_exact_name_is_followed() -> None:
    view = CatalogView({name: ("log",) for name in ("ledger-db", "quota-api", "ledger-db-proxy")})
    results = [_result("quota-api", 'template="ledger-db:5433 - no response" count=30')]
    assert named_dependency(results, ["quota-api"], view) == "ledger-db"
    # a partial name, a URL path or a time is no service
    for text in ("ledger:5433 refused", "GET /ledger-db:5433/x", "at 10:30 ledger-db-prox:80"):
        assert named_dependency([_result("quota-api", text)], ["quota-api"], view) is None, text
    assert asks_dependency("What's causing the slowness of quota-api?")
    assert asks_dependency("quota-api 响应很慢，是什么导致的？")
