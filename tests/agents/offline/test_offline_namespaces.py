"""A question about a Kubernetes namespace: the namespace is no service, no search term; its
services' alerts and log patterns are gathered."""

from __future__ import annotations

import pytest

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, plan_calls
from evigate.server.sources.services import CatalogView
from evigate.server.understanding.entities import extract

VIEW = CatalogView(
    {name: ("log",) for name in ("transcoder", "thumbnailer", "auth-broker", "profile-store", "media-api")},
    namespaces={"media": ("thumbnailer", "transcoder"), "accounts": ("auth-broker", "profile-store")},
)
AVAILABLE = {ToolName.QUERY_METRICS, ToolName.QUERY_LOGS, SUMMARIZE_LOGS}


@pytest.mark.parametrize(
    ("question", "tools", "level"),
    [
        ("Which services in the media namespace are logging errors?", {SUMMARIZE_LOGS}, "ERROR"),
        ("media 命名空间里哪些服务在报错？", {SUMMARIZE_LOGS}, "ERROR"),
        ("What is wrong in the media namespace?", {SUMMARIZE_LOGS, ToolName.QUERY_METRICS}, "WARN"),
        ("media 命名空间里现在有哪些告警？", {ToolName.QUERY_METRICS}, None),
    ],
)
def test_a_namespace_question_gathers_its_services(question: str, tools: set[str], level: str | None) -> None:
    entities = extract(question, VIEW)
    assert entities.namespaces == ("media",) and not entities.unknown_services and not entities.log_terms
    calls = plan_calls(entities, question, AVAILABLE)
    assert {call.service for call in calls} == {"thumbnailer", "transcoder"}
    assert {call.tool_name for call in calls} == tools
    assert {call.arguments.get("level") for call in calls if call.tool_name == SUMMARIZE_LOGS} <= {level}


def test_a_namespace_is_one_only_when_the_question_says_so_or_no_service_has_its_name() -> None:
    assert extract("Any errors in accounts?", VIEW).namespaces == ("accounts",)
    assert extract("media-api errors?", VIEW).namespaces == ()
    assert extract("Does transcoder log errors?", VIEW).namespace_services == ()
