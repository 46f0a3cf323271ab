"""Questions about a change: "what changed in X?", "since when has X been failing?".

Both ask for history rather than the last hour: the moment something started, the deploy or the
configuration reload before it. The offline agents then read the service's logs over everything the
files hold (the first and last times of each template, the rare events such as a restart, a reload
or a new version starting), and a metric's change point states both levels and both times.
"""

from __future__ import annotations

import re

_SINCE_WHEN = re.compile(
    r"\bsince when\b|\bwhen did\b.{0,60}\b(?:start|begin|began|appear)|\bhow long has\b"
    r"|从什么时候|什么时候开始|何时开始|从何时|多久以前开始",
    re.I,
)
_WHAT_CHANGED = re.compile(
    r"\bwhat(?:'s| has| was)? changed\b|\banything changed\b|\bwhat (?:was |got )?(?:deployed|modified)\b"
    r"|改过什么|改了什么|变更了什么|有什么变更|有什么变化|发生了什么变化|之前改",
    re.I,
)


def asks_change(question: str) -> str | None:
    """ "since_when", "what_changed", or None."""
    if _SINCE_WHEN.search(question):
        return "since_when"
    if _WHAT_CHANGED.search(question):
        return "what_changed"
    return None
