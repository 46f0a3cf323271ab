"""One reading of whether a question asks for a cause: why something happens, what is wrong with it,
what happened to it, or to investigate it. The metric comparison across labels, the log ranking
and the survey's key signals all ask it the same way."""

from __future__ import annotations

import pytest

from evigate.server.understanding.cause import asks_cause

ASKS = [
    "Why is ledger-api slow to post entries?",
    "Troubleshoot the 502s of ledger-api",
    "Investigate the latency of checkout",
    "What caused the spike in 5xx on gateway?",
    "Find the root cause of the outage",
    "What happened to billing-worker last night?",
    "What went wrong with the deploy?",
    "What's wrong with orders-api?",
    "Users say auth is down and they cannot log in, what is going on?",
    "Is there a problem with quota-keeper?",
    "Any issues with the payment service?",
    "Diagnose the errors of ledger-api",
    "ledger-api 为什么变慢了？",
    "排查一下 quota-keeper 的 502",
    "调查 ledger-api 的延迟",
    "支付服务出了什么问题？",
    "昨晚 billing-worker 发生了什么？",
    "订单服务怎么回事？",
    "延迟升高的原因是什么？",
    "找出根因",
    "quota-keeper 有问题吗？",
]
ASKS_NOT = [
    "Show ledger-api logs",
    "Does crm-connector have any alerts?",
    "What is the p99 latency of checkout?",
    "How do I fix HikariCP pool exhaustion?",
    "Any ERROR logs for payments-gateway?",
    "Summarize the errors in quota-keeper's logs.",
    "Is ledger-api up?",
    "Show the DEBUG logs of ledger-api",
    "列出 quota-keeper 日志里所有不同的错误",
    "kyc-service 有告警吗？",
    "ledger-api 的 CPU 是多少？",
    "How many requests did gateway serve because of the retry storm?",
    # how to fix a problem asks for steps: "problem" and "issue" name what the steps are for
    "How should I handle the order lock wait problem?",
    "What should I do about the disk issues on ledger-db?",
    "quota-keeper 的连接池问题怎么处理？",
]


@pytest.mark.parametrize("question", ASKS)
def test_a_question_that_asks_why_or_what_is_wrong_asks_for_a_cause(question: str) -> None:
    assert asks_cause(question)


@pytest.mark.parametrize("question", ASKS_NOT)
def test_a_question_of_a_fact_asks_for_no_cause(question: str) -> None:
    assert not asks_cause(question)


def test_a_discovered_metric_is_compared_across_its_labels_when_the_words_ask_for_a_cause() -> None:
    from datetime import UTC, datetime

    from evigate.server.tools.query_promql import _query

    now = datetime(2026, 12, 1, tzinfo=UTC)
    why = _query({"service": "checkout", "about": "/checkout 延迟很高，排查一下"}, now)
    what = _query({"service": "checkout", "about": "What is the latency of /checkout?"}, now)
    assert why.compare and not what.compare
