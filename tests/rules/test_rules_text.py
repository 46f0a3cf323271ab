"""Tokens and critical tokens, in Chinese and English."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules.text import (
    _CRITICAL,
    Source,
    _critical_word,
    compare,
    contains_token,
    critical_tokens,
    overlap,
    quotes_cleanly,
    scan,
    tokenize,
)


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
    source = Source("知识库：HikariCP 连接池耗尽时日志出现 Connection is not available")
    assert overlap(tokenize("HikariCP 连接池耗尽"), source) == 1.0
    assert overlap(tokenize("磁盘写满"), source) == 0.0
    assert overlap([], source) == 0.0


@pytest.mark.parametrize(
    ("token", "found"),
    [
        ("service", True),  # service=payment-service has a whole "service"
        ("payment", False),  # only inside payment-service
        ("92%", True),
        ("92", False),  # 92% is a different token
        ("30000ms", True),  # the sentence's final '.' does not join
        ("current=92%", True),
        ("current=85%", False),
        ("threshold=85%", True),
        ("连接", True),
    ],
)
def test_contains_token_respects_token_boundaries(token: str, found: bool) -> None:
    source = "service=payment-service, current=92%, threshold=85%, 连接池 timed out after 30000ms."
    assert contains_token(source.lower(), token) is found
    assert Source(source).has(token) is found
    assert (token in tokenize(source)) is found


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


ALPHABET = "aZ09-_.:/%= ,;连接池耗尽"


def _reference(excerpt: str, source: str) -> tuple[float, set[str]]:
    """The specification: compare the scan() tokens of both sides."""
    tokens, critical = scan(excerpt)
    known = set(scan(source)[0])
    # A lone CJK character (a unigram) matches wherever the character occurs.
    found = {t for t in tokens if t in known or (t >= "\u3400" and len(t) == 1 and t in source)}
    distinct = set(tokens)
    ratio = len(found) / len(distinct) if distinct else 0.0
    return ratio, {c.lower() for c in critical if c.lower() not in known}


@settings(max_examples=500)
@given(st.text(alphabet=ALPHABET, max_size=40), st.text(alphabet=ALPHABET, max_size=60))
def test_compare_agrees_with_scan(excerpt: str, source: str) -> None:
    ratio, lost = compare(excerpt, Source(source))
    expected_ratio, expected_lost = _reference(excerpt, source)
    assert abs(ratio - expected_ratio) < 1e-9
    # compare may also name the bare value of a lost key=value pair
    assert expected_lost <= {t.lower() for t in lost}
    assert all(t.lower() not in set(scan(source)[0]) for t in lost)
    assert all(Source(source).has(t) for t in scan(source)[0])


@settings(max_examples=300)
@given(st.text(alphabet=ALPHABET, min_size=1, max_size=60), st.data())
def test_compare_agrees_with_scan_on_mutated_quotes(source: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(source) - 1))
    end = data.draw(st.integers(start, len(source)))
    excerpt = source[start:end] + data.draw(st.text(alphabet=ALPHABET, max_size=5))
    ratio, lost = compare(excerpt, Source(source))
    expected_ratio, expected_lost = _reference(excerpt, source)
    assert abs(ratio - expected_ratio) < 1e-9
    assert expected_lost <= {t.lower() for t in lost}


@pytest.mark.parametrize(
    "word",
    ["a", "A", "ab", "Ab", "aB", "AB", "ABc", "AbC", "abC", "HighCPUUsage", "ERROR", "Connection", "x1"],
)
def test_critical_word_shortcut_matches_the_regex(word: str) -> None:
    assert _critical_word(word) is bool(_CRITICAL.search(word))


@settings(max_examples=500)
@given(st.text(alphabet=ALPHABET, max_size=40), st.data())
def test_a_clean_quote_keeps_every_token(source: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(source)))
    end = data.draw(st.integers(start, len(source)))
    quote = source[start:end]
    if quotes_cleanly(quote, source):
        tokens, critical = scan(quote)
        prepared = Source(source)
        assert all(prepared.has(c.lower()) for c in critical)
        assert all(prepared.has(t) for t in tokens if t[0].isascii())
