"""What a question asks for, as words to find in a finding: the names, log terms and codes it
holds (its quoted phrases whole), without the words every question uses. The offline Composer keeps
the findings that hold them, and puts them first. And whether it asks for a yes or a no, and which."""

from __future__ import annotations

import re

from evigate.rules import sentence_words
from evigate.rules.answer_facts import normalize

_YES_NO_EN = re.compile(r"^\s*(?:is|are|was|were|does|do|did|has|have|had|can|could|any|will)\b", re.I)
_YES_NO_ZH = re.compile(r"吗[？?]?\s*$|是否|有没有|有无|还在不在|吧[？?]?\s*$")
_TERM = re.compile(r"[A-Za-z][\w.:/-]{2,}|\d{3,}")
_PLAIN_WORDS = frozenset(
    re.findall(
        r"\w+",
        "any are was were the and for with what which who why how does did has have had there this that "
        "from into today yesterday now right last hours hour minutes logs log errors error warnings warning "
        "service services alert alerts wrong going issue issues problem problems happening show tell about "
        "since morning night still firing fail failed failing",
    )
)


def asked_terms(question: str) -> set[str]:
    """The words of the question worth finding in a finding (names, log terms, codes), lowercase."""
    quoted_terms = {q.lower() for q in re.findall(r"['\"“‘]([^'\"”’]{3,60})['\"”’]", question)}
    words = {w.lower().rstrip(".,:;?") for w in _TERM.findall(question)}
    return quoted_terms | {w for w in words if w not in _PLAIN_WORDS and len(w) >= 3}


def asks_for(text: str, terms: set[str]) -> bool:
    lowered = text.lower()
    return any(term in lowered for term in terms)


def is_yes_no(question: str) -> bool:
    return bool(_YES_NO_EN.match(question) or _YES_NO_ZH.search(question))


def asks_healthy(question: str) -> bool:
    """ "Is it healthy?", "一切正常吗？": a yes says nothing is wrong."""
    return sentence_words.asks_healthy(normalize(question))


def yes_or_no(states: set[str], problem: bool, question: str) -> bool | None:
    """The answer to a yes / no question over the headline findings (their states; `problem`: one
    of them is something wrong), or None when no yes / no follows from them. "Is it healthy?" is
    answered no over a problem and left open otherwise; "is there …?" yes over a problem; "is it
    still firing / resolved?" yes when a finding is in that state, no when one is in the opposite."""
    if asks_healthy(question):
        return False if problem else None
    asked = sentence_words.question_state(normalize(question))
    if asked == sentence_words.FOUND:  # "is anything wrong?": yes only over a problem found
        return True if problem else None
    if asked in states:
        return True
    opposite = {
        sentence_words.FIRING: sentence_words.RESOLVED,
        sentence_words.RESOLVED: sentence_words.FIRING,
    }
    return False if opposite.get(asked) in states else None
