"""What a question asks for, as words to find in a finding: the names, log terms and codes it
holds (its quoted phrases whole), without the words every question uses. The offline Composer keeps
the findings that hold them, and puts them first."""

from __future__ import annotations

import re

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
