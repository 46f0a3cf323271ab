"""Whether a question asks for a cause: why something happens ("why is X slow?", "为什么"), what is
wrong with it or what happened to it ("what's going on?", "出了什么问题", "怎么回事", "有问题吗"), or
to look into it ("troubleshoot", "investigate", "diagnose", "排查", "调查"). The one reading every
part that answers such a question differently uses: the log ranking and the lines before a symptom,
the survey's key signals, and a discovered metric compared across its labels."""

from __future__ import annotations

import re

_CAUSE = re.compile(
    # why, and the words of a cause
    r"\bwhy\b|\bcaus(?:e|es|ed|ing)\b|\broot[\s-]?cause"
    # to look into it
    r"|\btroubleshoot|\binvestigat|\bdiagnos"
    # what is wrong, what happened
    r"|\bwhat happened\b|\bwhat went wrong\b|\bwhat(?:'s|’s| is| was) (?:wrong|going on|happening)\b"
    r"|\bissues?\b|\bproblems?\b|\bwrong\b"
    r"|为什么|为啥|原因|根因|排查|调查|诊断|发生了什么|怎么回事|出了什么问题|什么问题|有问题|问题吗",
    re.IGNORECASE,
)


def asks_cause(question: str) -> bool:
    """Whether `question` asks why something happens, what is wrong, or to investigate it."""
    return _CAUSE.search(question) is not None
