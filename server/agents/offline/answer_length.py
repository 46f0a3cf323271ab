"""How long the offline Composer's answer may be: about eight sentences besides its lists, the most
severe findings kept, unless the question asks for a list."""

from __future__ import annotations

import re
from collections.abc import Collection

from evigate.rules.sentence_types import Sentence
from evigate.server.understanding.entities import asks_for_the_logs_listed


def most_severe(found: list[Sentence], room: int, asked: Collection[str] = ()) -> list[Sentence]:
    """At most `room` of the findings (in the order of severity, each claim's further sentences
    after its first): every claim's first sentence before any claim's further ones, and among the
    further ones first those that name an `asked` term (lowercase) no kept sentence names ("WORKER
    TIMEOUT or 502?": the line with the timeout is not cut for a sixth 502)."""
    if len(found) <= room:
        return found
    firsts: set[int] = set()
    seen: set[str] = set()
    for i, sentence in enumerate(found):
        owner = sentence.claim_ids[0] if sentence.claim_ids else ""
        if owner not in seen:
            seen.add(owner)
            firsts.add(i)
    kept = sorted(firsts)[:room]
    extras = [i for i in range(len(found)) if i not in firsts]  # in the order of severity
    named = {term for i in kept for term in asked if term in found[i].text.lower()}
    extras.sort(key=lambda i: not any(t in found[i].text.lower() and t not in named for t in asked))
    kept = sorted([*kept, *extras[: room - len(kept)]])
    return [found[i] for i in kept]


_LIST = re.compile(
    r"\b(?:list|enumerate)\b|\b(?:all|every|each)(?: of)?(?: the)? (?:alerts?|services?|errors?|warnings?"
    r"|findings?|problems?|issues?|pods?|logs?)\b|\bwhich \w+s\b"
    r"|列出|列举|所有的?\S{0,6}?(?:告警|服务|错误|日志|问题)|全部|哪些|清单",
    re.IGNORECASE,
)


def asks_for_list(question: str) -> bool:
    """ "List all alerts of X", "列出所有告警", "fetch the logs of X": the user asked for every item,
    not the most severe (the logs' items as the Planner reads a list request of them)."""
    return bool(_LIST.search(question)) or asks_for_the_logs_listed(question)
