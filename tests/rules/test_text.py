"""Tokens and critical tokens, in Chinese and English."""

from __future__ import annotations

import pytest

from rules.text import critical_tokens, overlap, quotes_cleanly, tokenize


def test_chinese_without_spaces_becomes_bigrams() -> None:
    assert tokenize("连接池耗尽") == ["连接", "接池", "池耗", "耗尽"]
    assert tokenize("池") == ["池"]


def test_mixed_text_keeps_identifiers_whole_and_lowercase() -> None:
    assert tokenize("inventory-service 的 HikariCP 连接池") == [
        "inventory-service",
        "的",
        "hikaricp",
        "连接",
        "接池",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("current=92%, duration=25m", ["current=92%", "duration=25m"]),
        ("request timed out after 30000ms", ["30000ms"]),
        ("HikariPool-1 - Connection is not available", ["HikariPool-1"]),
        ("ERR_1042 upstream answered HTTP 503", ["ERR_1042", "HTTP", "503"]),
        ("ORA-00001: unique constraint violated", ["ORA-00001"]),
        ("host db-01.prod.example.com at 10.0.0.12:3306", ["db-01.prod.example.com", "10.0.0.12:3306"]),
        ("HighCPUUsage on payment-service", ["HighCPUUsage", "payment-service"]),
        ("java.sql.SQLTransientConnectionException thrown", ["java.sql.SQLTransientConnectionException"]),
        ("CPU 使用率为 92.5%，持续 25 分钟", ["CPU", "92.5%", "25"]),
        ("state=firing", ["state=firing"]),
        ("the connection is not available", []),
    ],
)
def test_critical_tokens(text: str, expected: list[str]) -> None:
    assert critical_tokens(text) == expected


def test_overlap_counts_distinct_excerpt_tokens() -> None:
    source = frozenset(tokenize("知识库：HikariCP 连接池耗尽时日志出现 Connection is not available"))
    assert overlap(tokenize("HikariCP 连接池耗尽"), source) == 1.0
    assert overlap(tokenize("磁盘写满"), source) == 0.0
    assert overlap([], source) == 0.0


@pytest.mark.parametrize(
    ("excerpt", "clean"),
    [
        ("current=92%, duration=25m", True),
        ("current=92", False),  # cuts 92% in two
        ("ervice=payment-service", False),  # cuts service
        ("payment-service, state", True),
        ("nowhere", False),
        ("", False),
    ],
)
def test_quotes_cleanly(excerpt: str, clean: bool) -> None:
    source = (
        "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=critical"
    )
    assert quotes_cleanly(excerpt, source) is clean
