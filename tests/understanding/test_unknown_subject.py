"""A subject no source knows, named as the one thing a symptom is said of ("auth is down", "为什么 auth
挂了"), is an unknown service: the catalog is asked for it, and the answer says no source knows it
and lists the services the sources do know, closest first, never unrelated findings."""

from __future__ import annotations

import pytest

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.calls import plan_calls
from evigate.server.sources.services import CatalogView
from evigate.server.tools import default_registry
from evigate.server.understanding.entities import extract

VIEW = CatalogView(
    {name: ("log",) for name in ("ledger-api", "quota-keeper", "OrderRouter", "session-redis")}
)


@pytest.mark.parametrize(
    "question",
    [
        "Users say auth is down and they cannot log in, what is going on?",
        "auth is down, what is going on?",
        "Why is auth down?",
        "My team says auth is failing since this morning",
        "用户说 auth 挂了，登录不了，怎么回事？",
        "auth 宕机了吗？",
    ],
)
def test_a_name_a_symptom_is_said_of_that_no_source_knows_is_asked_of_the_catalog(question: str) -> None:
    entities = extract(question, VIEW)
    assert entities.unknown_services == ("auth",) and entities.services == ()
    calls = plan_calls(entities, question, default_registry().names())
    assert [(call.tool_name, call.arguments) for call in calls] == [
        (ToolName.LIST_SERVICES, {"name": "auth"})
    ]


@pytest.mark.parametrize(
    ("question", "service"),
    [
        ("quota-keeper is down, what is going on?", "quota-keeper"),
        ("Users say OrderRouter is slow", "OrderRouter"),
        ("ledger_api is failing, why?", "ledger-api"),
        ("redis is down", "session-redis"),
    ],
)
def test_a_known_name_in_that_place_is_the_known_service(question: str, service: str) -> None:
    entities = extract(question, VIEW)
    assert entities.services == (service,) and entities.unknown_services == ()


@pytest.mark.parametrize(
    "question",
    [
        "Is the package tracking system down?",
        "Everything is down, what is going on?",
        "The site is slow",
        "Everything is broken for everyone",
        "It is down again",
        "数据库挂了吗？",
    ],
)
def test_a_common_word_or_a_phrase_is_no_unknown_name(question: str) -> None:
    assert extract(question, VIEW).unknown_services == ()
