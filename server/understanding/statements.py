"""A question that states a problem instead of asking one: "Database connection timeouts are occurring
for blue-whale", "X is returning 502 errors. Please investigate.", "app-94 里的 blue-whale 出现数据库
连接超时。" Its user reports what they see and expects an investigation, which includes the runbook
written for that problem, though no word of the sentence asks for one.

Read from the sentence's form: no question mark, no interrogative opening or particle, no request
for data ("show me the logs", "列出"), and a problem named (a symptom, a log term) or an
investigation asked for.
"""

from __future__ import annotations

import re

from .entities import Entities

_EN_QUESTION = re.compile(
    r"^\s*(is|are|was|were|do|does|did|has|have|had|can|could|should|would|will|what|what's|why|how|"
    r"when|where|which|who|whose|any)\b",
    re.IGNORECASE,
)
_ZH_QUESTION = (
    "吗",
    "呢",
    "么",
    "有没有",
    "是否",
    "是不是",
    "什么",
    "为什么",
    "怎么",
    "怎样",
    "如何",
    "哪",
    "多少",
    "几",
)
_EN_REQUEST = re.compile(
    r"^\s*(please\s+)?(show|fetch|get|give|find|list|post|display|summari[sz]e|search|pull|grab|dump|"
    r"print|tell|draw|plot|graph|book|write|count)\b",
    re.IGNORECASE,
)
_ZH_REQUEST = ("给我", "获取", "找出", "查找", "列出", "贴出", "拉取", "调取", "画", "帮我写", "帮我订", "把")
_INVESTIGATE = ("investigate", "look into", "调查", "查一下原因", "看看怎么回事")


def states_a_problem(question: str, entities: Entities) -> bool:
    """The question reports a problem (and asks, at most, to investigate it) rather than asks a
    question or asks for data."""
    text = question.strip()
    if not text or "?" in text or "？" in text or entities.listing:
        return False
    lowered = text.lower()
    if _EN_QUESTION.match(lowered) or any(word in text for word in _ZH_QUESTION):
        return False
    if _EN_REQUEST.match(lowered) or text.startswith(_ZH_REQUEST):
        return False
    investigate = any(word in lowered for word in _INVESTIGATE)
    return investigate or bool(entities.symptoms) or bool(entities.log_terms)
