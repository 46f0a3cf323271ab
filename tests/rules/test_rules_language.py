"""The answer's language when the request names none (rules.language): the question's, by script;
Chinese words outside quoted identifiers make a mixed question Chinese."""

from __future__ import annotations

import pytest

from evigate.rules.language import answer_language, detect

QUESTIONS = [
    # plain questions
    ("what's wrong with order-service?", "en"),
    ("Does payment-service have a HighCPUUsage alert right now?", "en"),
    ("payment-service 现在有 HighCPUUsage 告警吗？", "zh"),
    ("order-service 怎么了？", "zh"),
    ("明天北京天气怎么样？", "zh"),
    ("How do I cook braised pork?", "en"),
    # Chinese with English service, alert and exception names
    ("HighCPUUsage 告警一般怎么排查？", "zh"),
    ("catalog-api 有 MongoNetworkError 或者 ECONNREFUSED 的日志吗？", "zh"),
    ("search-indexer 有 OOMKilled 吗", "zh"),
    ("pricing-engine 的 GC 情况怎么样？", "zh"),
    ("为什么 gateway 报 502?", "zh"),
    ("KafkaConsumerLagHigh 怎么办", "zh"),
    # a Chinese alias is a Chinese word outside quotes
    ("Why is 支付服务 slow?", "zh"),
    # English with a quoted Chinese log line or identifier
    ('why does order-service log "连接超时"?', "en"),
    ("Any logs like “支付回调处理超时” on payment-service?", "en"),
    ("What does `任务执行超时` mean in billing-worker's logs?", "en"),
    ("Is 「库存不足」 an error or a warning?", "en"),
    ("what does the message '调用结算服务失败' mean?", "en"),
    # code-like tokens carry no language
    ("grep /data/日志/app.log for ERROR", "en"),
    ("show me reason=连接超时 for billing-worker", "en"),
    ("kubectl logs search-indexer --previous 怎么看", "zh"),
    # nothing but names, numbers or quotes
    ("HighCPUUsage?", "zh"),
    ("502?", "zh"),
    ("`连接超时`", "zh"),
    ("payment-service", "zh"),
    ("", "zh"),
]


@pytest.mark.parametrize(("question", "language"), QUESTIONS)
def test_the_question_decides_by_script(question: str, language: str) -> None:
    assert detect(question) == language


@pytest.mark.parametrize(
    ("question", "language"), [("502?", "en"), ("HighCPUUsage?", "en"), ("告警？", "zh")]
)
def test_a_question_without_words_takes_the_default(question: str, language: str) -> None:
    assert detect(question, default="en") == language


@pytest.mark.parametrize(
    ("requested", "question", "language"),
    [
        ("en", "payment-service 怎么了？", "en"),
        ("zh", "what's wrong with order-service?", "zh"),
        ("EN", "order-service 怎么了？", "en"),
        ("zh-CN", "what's wrong?", "zh"),
        ("en_US", "怎么了？", "en"),
        ("", "what's wrong with order-service?", "en"),
        (None, "order-service 怎么了？", "zh"),
        ("fr", "what's wrong with order-service?", "en"),
    ],
)
def test_a_requested_language_wins(requested: str | None, question: str, language: str) -> None:
    assert answer_language(requested, question) == language
