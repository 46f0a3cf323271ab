"""Numbers written out in words, as digits: English number words ("forty-eight", "a dozen",
"twice", "a couple of", "half an hour") and Chinese numerals before a measure word ("三个告警", "四十八次",
"两小时", "半小时", 九成 = 90%), so that the answer check compares them by value like any other number.

Applied to text already normalised by `rules.answer_facts.normalize` (lowercase, NFKC,
百分之九十二 already 92%).
"""

from __future__ import annotations

import re

CN_DIGIT = dict(zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_CN_SCALE = {"十": 10, "百": 100, "千": 1000}


def cn_integer(numerals: str) -> int:
    """一百零八 = 108, 九二 = 92 (digit by digit), 三万 = 30000; every character must be a numeral."""
    if not any(ch in _CN_SCALE or ch == "万" for ch in numerals):
        return int("".join(str(CN_DIGIT[ch]) for ch in numerals))
    total = section = current = 0
    for ch in numerals:
        if ch in CN_DIGIT:
            current = CN_DIGIT[ch]
        elif ch == "万":
            total += (section + current) * 10000
            section = current = 0
        else:  # 十, 百 or 千; a leading 十 means 1 x 10
            section += (current or 1) * _CN_SCALE[ch]
            current = 0
    return total + section + current


# A Chinese number counts only before a measure word or unit (三个告警, 两次, 五分钟): 一直, 一些,
# 之一 and 第一 are no numbers, 一个 / 一种 / 一条 are the indefinite article, and 最近一次, 上一次,
# 每一次, 最慢一次 say which time, not how many.
_CN_NUMBER = re.compile(
    r"(?<![第\d零〇一二两三四五六七八九十百千万近上下这那每同慢快高低大小后])"
    r"(?!一(?:个|种|条|项|位|份)(?![零〇一二两三四五六七八九十百千万]))"
    r"([零〇一二两三四五六七八九十百千万]+|半)"
    r"(?=\s?(?:个|条|次|秒|分钟|小时|天|台|项|种|倍|毫秒|份|例|处|只|名|位|组|批|周|月|年|行|笔|%))"
)

_EN_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_EN_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_EN_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_EN_WORD = "|".join(sorted([*_EN_UNITS, *_EN_TENS, *_EN_SCALES], key=len, reverse=True))
# A run of number words: "forty-eight", "two hundred and ten", "a hundred".
_EN_NUMBER = re.compile(
    rf"\b(?:a\s+(?=hundred|thousand|million))?(?:{_EN_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_EN_WORD}))*\b"
)
# "one" is a number only when a noun follows it, not in "one of", "no one", "this one".
_NOT_AFTER_ONE = re.compile(r"\s*(?:$|of\b|or\b|another\b|more\b|by\b|and\b|who\b|that\b|which\b|[^\w\s])")
_NOT_BEFORE_ONE = re.compile(r"(?:\bno|\bthis|\bthat|\bthe|\bany|\bevery|\beach|\bwhich|\bsome)\s+$")
_SPECIAL = (
    (re.compile(r"\bhalf an? (hour|minute|day|second)\b"), r"0.5 \1s"),
    (re.compile(r"\ba dozen\b"), "12"),
    (re.compile(r"\btwice\b"), "2 times"),
    (re.compile(r"\bthrice\b"), "3 times"),
    (re.compile(r"\ba (?:couple|pair) of\b"), "2"),
    (re.compile(r"\ba quarter of an hour\b"), "15 minutes"),
    (re.compile(r"一刻钟"), "15分钟"),
    (re.compile(r"\bonce\b(?=\s+(?:in|during|between|since|at)\b)"), "1 time"),
    # "an hour", "a minute": one of that unit, as a duration (relative times are read before this).
    (re.compile(r"\ban? (second|minute|hour|day|week)\b(?!\s+ago)"), r"1 \1"),
)


_NUMBER_WORDS = re.compile(rf"(?:{_EN_WORD})(?:-(?:{_EN_WORD}))+")


def is_number_words(token: str) -> bool:
    """Whether a hyphenated token is a number in words ("forty-eight"), not an identifier."""
    return _NUMBER_WORDS.fullmatch(token.lower()) is not None


def _en_value(words: str) -> int:
    total = current = 0
    for word in re.split(r"[\s-]+", words):
        if word in ("and", "a"):
            current = current or (1 if word == "a" else 0)
            continue
        if word in _EN_UNITS:
            current += _EN_UNITS[word]
        elif word in _EN_TENS:
            current += _EN_TENS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        else:  # thousand, million
            total += (current or 1) * _EN_SCALES[word]
            current = 0
    return total + current


def _en_number(match: re.Match[str]) -> str:
    words = match.group()
    if words == "one":
        text = match.string
        if _NOT_AFTER_ONE.match(text, match.end()) or _NOT_BEFORE_ONE.search(text, 0, match.start()):
            return words
    return str(_en_value(words))


def _cn_number(match: re.Match[str]) -> str:
    numerals = match.group(1)
    return "0.5" if numerals == "半" else str(cn_integer(numerals))


# 九成 is 90%: tenths, after a numeral (成功, 完成, 造成 are no numbers).
_CN_TENTHS = re.compile(
    r"(?<![\d零〇一二两三四五六七八九十百千万])([一二两三四五六七八九])成(?![功为了本员品型熟立果交长])"
)


def spelled_as_digits(flat: str) -> str:
    """`flat` (normalised text) with its spelled-out numbers written as digits."""
    for pattern, replacement in _SPECIAL:
        flat = pattern.sub(replacement, flat)
    if not flat.isascii():
        flat = _CN_TENTHS.sub(lambda m: f"{CN_DIGIT[m.group(1)] * 10}%", flat)
        flat = _CN_NUMBER.sub(_cn_number, flat)
    return _EN_NUMBER.sub(_en_number, flat)
