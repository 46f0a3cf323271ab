"""Spelled-out numbers as digits (rules.numerals): English number words and Chinese numerals before a
measure word; words that only look like numbers stay words."""

from __future__ import annotations

import pytest

from evigate.rules.numerals import cn_integer, is_number_words, spelled_as_digits

CASES = [
    ("forty-eight errors", "48 errors"),
    ("two hundred and ten messages", "210 messages"),
    ("forty-eight thousand two hundred ten messages", "48210 messages"),
    ("a hundred requests", "100 requests"),
    ("a dozen pods", "12 pods"),
    ("it failed twice", "it failed 2 times"),
    ("for half an hour", "for 0.5 hours"),
    ("for an hour", "for 1 hour"),
    ("an hour ago", "an hour ago"),  # a relative time, read as one
    ("three alerts", "3 alerts"),
    ("one alert is firing", "1 alert is firing"),
    ("one of the alerts", "one of the alerts"),
    ("no one knows", "no one knows"),
    ("this one resolved", "this one resolved"),
    ("twenty percent", "20 percent"),
    ("三个告警", "3个告警"),
    ("四十八次", "48次"),
    ("两小时", "2小时"),
    ("半小时", "0.5小时"),
    ("一百零八条", "108条"),
    ("三万条消息", "30000条消息"),
    ("一直在重启", "一直在重启"),
    ("其中之一", "其中之一"),
    ("第一个告警", "第一个告警"),
    ("一个告警", "一个告警"),  # the indefinite article
    ("最近一次在 23:28", "最近一次在 23:28"),
    ("还出现了一次", "还出现了1次"),
    ("一小时前", "1小时前"),
]


@pytest.mark.parametrize(("text", "digits"), CASES)
def test_spelled_numbers_become_digits(text: str, digits: str) -> None:
    assert spelled_as_digits(text) == digits


@pytest.mark.parametrize(
    ("numerals", "value"), [("九二", 92), ("十五", 15), ("一百零八", 108), ("两千", 2000)]
)
def test_chinese_numerals(numerals: str, value: int) -> None:
    assert cn_integer(numerals) == value


@pytest.mark.parametrize(
    ("token", "words"),
    [
        ("forty-eight", True),
        ("twenty-one", True),
        ("one-two", True),
        ("db-01", False),
        ("order-service", False),
    ],
)
def test_a_hyphenated_number_is_no_identifier(token: str, words: bool) -> None:
    assert is_number_words(token) is words
