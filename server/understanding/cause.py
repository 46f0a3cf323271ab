"""Whether a question asks for a cause: why something happens ("why is X slow?", "为什么"), what is
wrong with it or what happened to it ("what's going on?", "出了什么问题", "怎么回事", "有问题吗"), or
to look into it ("troubleshoot", "investigate", "diagnose", "排查", "调查"). The one reading every
part that answers such a question differently uses: the log ranking and the lines before a symptom,
the survey's key signals, and a discovered metric compared across its labels."""

from __future__ import annotations

import re

from evigate.server.understanding.entities import asks_steps

_CAUSE = re.compile(
    # why, and the words of a cause
    r"\bwhy\b|\bcaus(?:e|es|ed|ing)\b|\broot[\s-]?cause"
    # to look into it
    r"|\btroubleshoot|\binvestigat|\bdiagnos"
    # what is wrong, what happened
    r"|\bwhat happened\b|\bwhat went wrong\b|\bwhat(?:'s|’s| is| was) (?:wrong|going on|happening)\b"
    r"|为什么|为啥|原因|根因|排查|调查|诊断|发生了什么|怎么回事|出了什么问题",
    re.IGNORECASE,
)
# Words that say something is wrong without asking why: a cause question unless the question asks
# how to fix it ("how should I handle the lock wait problem?" asks for steps, not for a cause).
_TROUBLE = re.compile(r"\bissues?\b|\bproblems?\b|\bwrong\b|什么问题|有问题|问题吗", re.IGNORECASE)


def asks_cause(question: str) -> bool:
    """Whether `question` asks why something happens, what is wrong, or to investigate it."""
    if _CAUSE.search(question):
        return True
    return _TROUBLE.search(question) is not None and not asks_steps(question)
