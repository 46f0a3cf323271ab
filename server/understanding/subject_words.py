"""The words that are never a log question's subject: English function words, pronouns, request
words, reporting verbs and generic verbs, Chinese separators and edge characters, log stores, dates
and the name beside "namespace" (subjects.py reads a subject from what is left). The words are data,
subject_words.json, by kind; the patterns (dates, a namespace's name) are here."""

from __future__ import annotations

import json
import re
from pathlib import Path

WORDS_FILE = Path(__file__).with_name("subject_words.json")
_WORDS = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
# Every English word of every kind (function words, pronouns, request words, reporting verbs, the
# words the other entities already stand for: levels, "logs", times, Kubernetes kinds, log stores).
_EN_STOP = frozenset(word for words in _WORDS["en"].values() for word in words)
# Who reports a symptom is not the symptom: a people word just before a reporting verb ("users say",
# "my team noticed") is no subject, while "user login" elsewhere still is.
EN_PEOPLE = frozenset(_WORDS["en_people"])
EN_REPORTING = frozenset(_WORDS["en"]["reporting"])
# A log store's name is where the logs were asked from, never what they say ("from New Relic").
_LOG_STORES = tuple(_WORDS["en_phrases"]["log_stores"])
# A day or a month the question dates its logs by ("since last Thursday", "last December", "June 12",
# "上周四", "从 6 月 12 日以来", "去年 12 月") is when, never what the logs say.
_DATES = re.compile(
    r"(?i)\b(?:(?:last|this|next|past)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:(?:last|this|next|past)\s+)?(?:january|february|march|april|june|july|august|september"
    r"|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?"
    r"|\b(?:last|this|past)\s+(?:week|month|year)\b|\b\d{4}-\d{2}-\d{2}\b"
    r"|(?:\d{1,4}\s*[年月日号]\s*)+|(?:上|下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|上周|上个?月|去年|今年|本月|本周|这周"
)
# The name written beside the word "namespace" is a namespace, never a search term.
_NAMESPACE_NAME = (
    re.compile(r"(?i)\bnamespaces?\s+`?([\w.-]+)"),
    re.compile(r"(?i)(?<![\w-])([\w.-]+)`?\s*(?:namespaces?\b|命名空间|名字空间)"),
)
# Chinese phrases that separate the words of a question (never part of a subject): the listed ones,
# hearsay ("据说", "好像") and who reports what ("用户反馈", "有人说"), longest first.
_ZH = _WORDS["zh"]
_ZH_SEPARATORS = tuple(
    sorted(
        dict.fromkeys(
            [
                *_ZH["separators"],
                *_ZH["hearsay"],
                *(person + verb for person in _ZH["people"] for verb in _ZH["reporting"]),
            ]
        ),
        key=len,
        reverse=True,
    )
)
# Trimmed from either end of a Chinese run ("有用户登录失败" → "用户登录失败", "登录不了" → "登录").
_ZH_EDGE = tuple(_ZH["edges"])
