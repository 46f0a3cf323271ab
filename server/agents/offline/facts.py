"""Critical facts of a claim: numbers, identifiers and negations, and whether an excerpt carries them.

The Verifier's lexical derivability check. A fact is a token that changes what a claim asserts if
it changes: `92%` vs `95%`, `payment-service` vs `order-service`, "found" vs "not found".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evigate.rules import guard
from evigate.rules.text import critical_tokens, tokenize

NEGATIVE_PHRASES_ZH: tuple[str, ...] = (
    "当前查询未检索到",
    "本次查询未检索到",
    "本次检索未发现",
    "本次检索未检索到",
)
NEGATIVE_PHRASES_EN: tuple[str, ...] = (
    "this query found no matching evidence",
    "this query returned no matching evidence",
    "no matching evidence was found in this query",
)
# Claims that turn "this query returned nothing" into a statement about the world.
OVERSTATEMENTS: tuple[str, ...] = (
    "问题不存在",
    "不存在该问题",
    "已排除",
    "排除了",
    "确认没有",
    "确认不存在",
    "日志层面已排除",
    "系统健康",
    "一切正常",
    "does not exist",
    "doesn't exist",
    "ruled out",
    "confirmed no",
    "confirmed that there is no",
    "no problem",
    "is healthy",
    "everything is fine",
)
_NEGATION_ZH = ("未检索到", "未发现", "未找到", "没有", "不存在", "未出现", "排除", "无匹配")
_NEGATION_EN = re.compile(r"\b(?:no|not|none|never|nothing|without|n't)\b", re.IGNORECASE)
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」")
_NO_EVIDENCE_MARKERS = ("returned no evidence", "evidence_status=no_evidence", "no_evidence")


@dataclass(frozen=True)
class Fact:
    text: str
    kind: str  # "number" | "identifier" | "negation"


def critical_facts(text: str) -> list[Fact]:
    """The numbers, identifiers and negations of `text`, in order of appearance, without repeats.

    Numbers and identifiers are the Gatekeeper's critical tokens (rules.text), so a claim is held to
    the same standard as an excerpt; negations are phrase matches.
    """
    found: list[tuple[int, Fact]] = []
    cursor = 0
    for token in critical_tokens(text):
        position = text.find(token, cursor)
        cursor = position + len(token) if position >= 0 else cursor
        value = token.split("=", 1)[-1]  # key=value pairs are judged by their value
        kind = "number" if value[:1].isdigit() else "identifier"
        found.append((max(position, 0), Fact(token, kind)))
    taken: list[tuple[int, int]] = []
    lowered = text.lower()
    for phrase in (*NEGATIVE_PHRASES_ZH, *NEGATIVE_PHRASES_EN, *OVERSTATEMENTS):
        start = lowered.find(phrase)
        end = start + len(phrase)
        if start >= 0 and not any(start < t_end and t_start < end for t_start, t_end in taken):
            taken.append((start, end))
            found.append((start, Fact(text[start:end], "negation")))
    words = [*(re.finditer(re.escape(word), text) for word in _NEGATION_ZH), _NEGATION_EN.finditer(text)]
    for matches in words:
        for match in matches:
            start, end = match.span()
            if not any(start < t_end and t_start < end for t_start, t_end in taken):
                taken.append((start, end))
                found.append((start, Fact(match.group(0), "negation")))
    seen: set[tuple[str, str]] = set()
    facts: list[Fact] = []
    for _, fact in sorted(found, key=lambda item: item[0]):
        key = (fact.text.lower(), fact.kind)
        if key not in seen:
            seen.add(key)
            facts.append(fact)
    return facts


def is_no_evidence_text(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _NO_EVIDENCE_MARKERS)


def is_overstatement(text: str) -> bool:
    """An over-statement outside quotation marks, by our phrase list or the pipeline's answer guard
    (a quoted source line is the source's wording, judged against the excerpt instead)."""
    bare = _QUOTED.sub("", text)
    lowered = bare.lower()
    return any(phrase in lowered for phrase in OVERSTATEMENTS) or bool(guard.scan(bare, []))


def has_scoped_negative_phrase(text: str) -> bool:
    """True when the claim says "not found in this query" rather than "does not exist"."""
    lowered = text.lower()
    return any(phrase in text for phrase in NEGATIVE_PHRASES_ZH) or any(
        phrase in lowered for phrase in NEGATIVE_PHRASES_EN
    )


def _tokens(excerpts: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for excerpt in excerpts:
        out.update(tokenize(excerpt))
    return out


def _phrase_in(phrase: str, excerpts: Sequence[str]) -> bool:
    lowered = phrase.lower()
    if lowered.isascii():
        pattern = r"(?<![a-z0-9_])" + re.escape(lowered) + r"(?![a-z0-9_])"
        return any(re.search(pattern, excerpt.lower()) for excerpt in excerpts)
    return any(lowered in excerpt.lower() for excerpt in excerpts)


def fact_supported(fact: Fact, excerpts: Sequence[str], *, negative_claim: bool) -> bool:
    """Whether one of the verified `excerpts` carries `fact`.

    A negation is supported by a no-evidence excerpt only in a negative_observation (the phrasing is
    checked separately), or by an excerpt that itself says it (a quoted "is not available").
    A bare number is carried by the same number with a percent sign ("92" by "current=92%").
    """
    if fact.kind == "negation":
        if _phrase_in(fact.text, excerpts):
            return True  # the source says it (a quoted "is not available")
        if is_overstatement(fact.text):
            return False
        return negative_claim and any(is_no_evidence_text(excerpt) for excerpt in excerpts)
    tokens = _tokens(excerpts)
    token = fact.text.lower()
    return token in tokens or (fact.kind == "number" and f"{token}%" in tokens)


def unsupported(facts: Iterable[Fact], excerpts: Sequence[str], *, negative_claim: bool) -> list[Fact]:
    return [fact for fact in facts if not fact_supported(fact, excerpts, negative_claim=negative_claim)]
