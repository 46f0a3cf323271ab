"""The words that ask for logs ("fetch", "show me", "summarize", "给我看", "列出"), the log store they
are asked from ("from Loki", "从 New Relic") and a namespace's name are never what the logs are
searched for; a question that lists or fetches a service's logs gets every distinct template."""

from __future__ import annotations

import pytest

from evigate.server.agents.offline.calls import plan_calls
from evigate.server.sources.services import CatalogView
from evigate.server.tools import default_registry
from evigate.server.understanding.entities import extract

VIEW = CatalogView(
    {"ledger-api": ("logs",), "quota-keeper": ("logs",)},
    namespaces={"ns-alpha": ("ledger-api",)},
)


@pytest.mark.parametrize(
    "question",
    [
        "Fetch me the logs for the ledger-api pod in namespace ns-alpha",
        "Show me logs from the pod quota-keeper in namespace ns-beta",
        "Retrieve the loki logs of ledger-api",
        "fetch logs for app quota-keeper from New Relic",
        "把 ns-beta 命名空间里 quota-keeper pod 的日志给我。",
        "给我看 quota-keeper 的日志",
        "从 Datadog 拉取应用 ledger-api 的日志。",
        "获取 ledger-api 两个容器的日志。",
    ],
)
def test_asking_for_a_services_logs_searches_no_word_of_the_request(question: str) -> None:
    _assert_a_listing(question)


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("在 quota-keeper 的日志里查找 'lease lost'。", "lease lost"),
        ("搜索 quota-keeper 日志中的 'lease lost'", "lease lost"),
    ],
)
def test_the_quoted_text_to_find_is_the_term_not_the_word_find(question: str, term: str) -> None:
    assert [t.name for t in extract(question, VIEW).log_terms] == [term]


def _assert_a_listing(question: str) -> None:
    entities = extract(question, VIEW)
    assert entities.services and not entities.log_terms, [t.name for t in entities.log_terms]
    assert entities.listing
    calls = plan_calls(entities, question, default_registry().names())
    listed = [call for call in calls if call.purpose == "list"]
    assert [call.tool_name for call in listed] == ["summarize_logs"]
    assert "level" not in listed[0].arguments and "keyword" not in listed[0].arguments
    # the newest lines are quoted beside the templates
    assert any(call.tool_name == "query_logs" and "keyword" not in call.arguments for call in calls)


@pytest.mark.parametrize(
    "question",
    ["Summarize the errors in quota-keeper's logs.", "列出 quota-keeper 日志里所有不同的错误"],
)
def test_a_list_of_errors_is_every_error_template_not_the_newest_lines(question: str) -> None:
    entities = extract(question, VIEW)
    assert not entities.log_terms and entities.level == "ERROR"
    calls = plan_calls(entities, question, default_registry().names())
    assert [(call.tool_name, call.purpose, call.arguments.get("level")) for call in calls] == [
        ("summarize_logs", "list", "ERROR")
    ]


def test_the_subject_beside_the_request_words_stays_a_term() -> None:
    question = "What is causing journal checksum mismatch errors in ledger-api namespace ns-alpha?"
    assert [term.name for term in extract(question, VIEW).log_terms] == ["journal checksum mismatch"]
    troubleshoot = extract("Troubleshoot 507 errors in ledger-api ns-gamma namespace", VIEW)
    assert not troubleshoot.listing and [t.name for t in troubleshoot.log_terms] == ["507"]


def test_a_service_written_out_is_its_mention_not_a_word_of_its_name() -> None:
    view = CatalogView({"edge-proxy-deployment": ("logs",)})
    question = "Fetch the logs for deployment `edge-proxy-deployment`"
    entities = extract(question, view)
    assert entities.services == ("edge-proxy-deployment",) and not entities.log_terms
    assert entities.service_matches[0].how == "exact"


@pytest.mark.parametrize(
    "question",
    [
        "Show me the logs for the pod `quota-keeper-5d8f7c9b4-x7kq2` since last Thursday",
        "What were the errors in quota-keeper last December?",
        "What are the errors in quota-keeper since June 12?",
        "给我看 quota-keeper 从上周四以来的日志。",
        "quota-keeper 从 6 月 12 日以来有哪些错误？",
        "quota-keeper 去年 12 月有哪些错误？",
    ],
)
def test_a_day_or_month_is_when_not_what_the_logs_say(question: str) -> None:
    entities = extract(question, VIEW)
    assert entities.services == ("quota-keeper",)
    assert not entities.log_terms, [t.name for t in entities.log_terms]


@pytest.mark.parametrize(
    "question",
    [
        "Is there a Python traceback in quota-keeper's logs?",
        "What exception is quota-keeper throwing, and what caused it?",
        "quota-keeper 抛出的是什么异常？",
    ],
)
def test_a_kind_of_line_is_searched_as_that_kind_not_as_its_words(question: str) -> None:
    (term,) = extract(question, VIEW).log_terms
    assert term.name == "exception"
    for line in (
        "Traceback (most recent call last):",
        "com.acme.store.QuotaLockedException: bucket 7 is locked",
        "Caused by: java.net.SocketTimeoutException: Read timed out",
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool read timed out",
        "panic: runtime error: index out of range",
    ):
        assert term.matches(line), line
    for line in (
        "ERROR quota sweep failed",
        "python worker started",
        "error rate 3%",
        "Retrying after connection broken by ReadTimeoutError(pool, url)",
    ):
        assert not term.matches(line), line
