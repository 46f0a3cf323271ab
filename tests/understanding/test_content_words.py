"""Only the words that carry content become search terms. Function words, pronouns, request words,
reporting verbs ("say", "noticed") with who reports ("users", "my team", "用户反馈"), negations
("cannot", "不了") and generic verbs ("going", "throwing") never do, in English and Chinese; an
identifier (snake_case, dotted, an error code, an exception class, quoted text, a number with its
unit) always does, whole."""

from __future__ import annotations

import json

import pytest

from evigate.server.sources.services import CatalogView
from evigate.server.understanding import subject_words
from evigate.server.understanding.entities import extract

VIEW = CatalogView({"ledger-api": ("logs",), "order_router": ("logs",)})

TERMS = [
    ("Users say ledger-api is down and they cannot log in, are there errors in the logs?", ["down"]),
    (
        "We noticed that ledger-api keeps getting errors about journal replay, can you check?",
        ["journal replay"],
    ),
    ("My team says ledger-api logs show SocketTimeoutException", ["SocketTimeoutException"]),
    (
        "Customers have been complaining that ledger-api logs say 'ledger locked', what is going on?",
        ["ledger locked"],
    ),
    ("Any logs mentioning payment_timeout on ledger-api?", ["payment_timeout"]),
    ("Are there errors with db.pool.size in ledger-api?", ["db.pool.size"]),
    ("Does ledger-api log ERR_CONN_REFUSED?", ["ERR_CONN_REFUSED"]),
    ("Does ledger-api log ORA-00942 errors?", ["ORA-00942"]),
    ("Any java.net.SocketTimeoutException in ledger-api logs?", ["java.net.SocketTimeoutException"]),
    ("Any ledger-api logs with latency over 500ms?", ["500ms"]),
    ("Any user login failures in ledger-api logs?", ["user login failures"]),
    ("Are there logs of order_router about stale quotes?", ["stale quotes"]),
    ("用户反馈 ledger-api 登录不了，帮我看看日志", ["登录"]),
    ("有人说 ledger-api 无法连接数据库，日志里有报错吗", ["连接数据库"]),
    ("ledger-api 日志里有 journal_replay 相关的错误吗？", ["journal_replay"]),
    ("据说 ledger-api 的日志里有 'ledger locked'，是真的吗", ["ledger locked"]),
]


@pytest.mark.parametrize(("question", "terms"), TERMS, ids=[q for q, _ in TERMS])
def test_only_content_words_and_whole_identifiers_are_search_terms(question: str, terms: list[str]) -> None:
    assert [term.name for term in extract(question, VIEW).log_terms] == terms


def test_an_identifier_is_searched_as_written() -> None:
    (term,) = extract("Any logs mentioning payment_timeout on ledger-api?", VIEW).log_terms
    assert term.arguments() == {"keyword": "payment_timeout"}


def test_the_words_are_data_by_kind_in_both_languages() -> None:
    data = json.loads(subject_words.WORDS_FILE.read_text(encoding="utf-8"))
    kinds = {"function", "negations", "pronouns", "request", "reporting", "generic_verbs"}
    assert kinds <= set(data["en"]) and {"separators", "edges", "reporting", "people"} <= set(data["zh"])
    for word in ("cannot", "they", "say", "going", "show"):
        assert word in subject_words._EN_STOP
    assert "用户反馈" in subject_words._ZH_SEPARATORS and "有人说" in subject_words._ZH_SEPARATORS


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("Show ledger-api's logs about the reconciler's backlog", ["reconciler", "backlog"]),
        ("Any errors about the journal writer's queue in ledger-api logs?", ["journal writer"]),
        ("Users say ledger-api's logs show 'ledger locked'", ["ledger locked"]),
    ],
)
def test_a_possessive_is_no_quote_and_no_part_of_a_term(question: str, terms: list[str]) -> None:
    entities = extract(question, VIEW)
    assert entities.services == ("ledger-api",) and entities.unknown_services == ()
    assert [term.name for term in entities.log_terms] == terms


@pytest.mark.parametrize(
    "question",
    [
        "Any logs mentioning PaymentRetryScheduler in ledger-api?",
        "ledger-api 日志里有 PaymentRetryScheduler 吗？",
        "Does ledger-api log anything about the PaymentRetryScheduler?",
    ],
)
def test_a_camelcase_word_in_a_log_question_is_what_the_logs_say(question: str) -> None:
    entities = extract(question, VIEW)
    assert entities.alert_names == () and [t.name for t in entities.log_terms] == ["PaymentRetryScheduler"]


def test_a_camelcase_word_is_an_alert_when_alerts_are_asked_or_an_alert_source_knows_it() -> None:
    assert extract("Is PaymentRetryScheduler firing on ledger-api?", VIEW).alert_names == (
        "PaymentRetryScheduler",
    )
    known = CatalogView({"ledger-api": ("logs",)}, alert_names=("LedgerLagHigh",))
    assert extract("Any logs about LedgerLagHigh on ledger-api?", known).alert_names == ("LedgerLagHigh",)
    # in a service's place it stays the name it was read as ("BookingLedger's logs")
    assert extract("Any errors in BookingLedger's logs?", VIEW).log_terms == ()
