"""The section of a runbook that answers what a question asks: how to fix, how to diagnose, what it is.

A runbook is found as a document; which of its sections answers depends on the question's intent,
not on which section shares the most words with it (a symptom's own words pick the Symptoms
section of a "how do I fix it" question). `intent_of` reads the intent from the question's words,
`choose` picks the section whose heading names that intent, and `notes` the document's global
sections (escalation, owners) that go with any answer. Pure: blocks in, blocks out, with the reason
the trace shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .documents import Block

Intent = Literal["escalate", "fix", "diagnose", "what"]

# The words of a question that say what it asks for (checked in this order: "how do I diagnose"
# asks to diagnose even though "how do I" would also ask for steps, and "what are the steps" asks for
# steps).
_QUESTION_WORDS: tuple[tuple[Intent, tuple[str, ...]], ...] = (
    (
        "escalate",
        (
            "escalate", "escalation", "who owns", "owner", "owners", "who to call",
            "找谁", "升级", "负责人", "联系谁",
        ),
    ),
    (
        "diagnose",
        (
            "diagnose", "diagnosis", "investigate", "troubleshoot", "debug", "find out", "root cause",
            "排查", "诊断", "定位", "调查",
        ),
    ),
    (
        "fix",
        (
            "fix", "resolve", "resolution", "mitigate", "mitigation", "remediate", "remediation",
            "steps", "procedure", "what should", "what to do", "how do i", "how to", "how should",
            "recover", "handle", "怎么办", "处理", "解决", "处置", "修复", "恢复", "步骤", "怎么弄",
        ),
    ),
    (
        "what",
        (
            "what does", "what is", "what's", "mean", "meaning", "symptom", "symptoms",
            "是什么", "什么意思", "含义", "意味着", "现象",
        ),
    ),
)  # fmt: skip
# Headings that answer each intent, and the global notes any answer carries.
_HEADINGS: dict[Intent, tuple[str, ...]] = {
    "fix": (
        "mitigation", "remediation", "resolution", "steps", "fix", "procedure", "recovery", "actions",
        "处理", "解决", "处置", "步骤", "修复", "恢复",
    ),
    "diagnose": (
        "diagnosis", "diagnose", "troubleshooting", "investigation", "debugging", "排查", "诊断", "定位",
    ),
    "what": (
        "symptoms", "symptom", "overview", "description", "summary", "what", "现象", "概述", "说明", "含义",
    ),
}  # fmt: skip
_NOTE_HEADINGS = (
    "escalation",
    "owner",
    "owners",
    "contact",
    "contacts",
    "on-call",
    "升级",
    "负责人",
    "联系人",
    "值班",
)
_HEADINGS["escalate"] = _NOTE_HEADINGS
# Words the offline planner adds to a knowledge query to ask for one intent's section.
INTENT_QUERY: dict[Intent, str] = {
    "escalate": "escalation owners 升级 负责人",
    "fix": "mitigation steps resolution 处理 解决",
    "diagnose": "diagnosis troubleshooting steps 排查 诊断 步骤",
    "what": "symptoms meaning 现象 含义",
}


# Words that ask for a section without naming any subject ("commands" and "命令" ask for the steps).
_SECTION_ONLY = ("commands", "command", "操作", "命令")


def subject_of(query: str) -> str:
    """The query without the words that only say which section it wants ("how do I", "steps",
    "处理"): what finds the document. A section's words would find any runbook's section of that
    name; the section is chosen from them afterwards (`intent_of`, `choose`)."""
    words = {w for _, said in _QUESTION_WORDS for w in said} | set(_SECTION_ONLY)
    words |= {w for said in _HEADINGS.values() for w in said}
    words |= {w for said in INTENT_QUERY.values() for w in said.split()}
    text = query
    for word in sorted(words, key=len, reverse=True):
        if word.isascii():
            # a word inside a name (`diagnose-error-rate`, `steps_total`) is the name's
            text = re.sub(r"(?<![\w.-])" + re.escape(word) + r"(?![\w.-])", " ", text, flags=re.I)
        else:
            text = text.replace(word, " ")
    return " ".join(text.split())


@dataclass(frozen=True)
class Choice:
    blocks: tuple[Block, ...]  # the section: one block, or the subsections under the chosen heading
    heading: str  # the chosen heading
    reason: str  # "intent fix: heading Mitigation", for the trace

    @property
    def block(self) -> Block:
        return self.blocks[0]


def _has(text: str, word: str) -> bool:
    if word.isascii():
        return re.search(r"(?<![a-z])" + re.escape(word) + r"(?![a-z])", text) is not None
    return word in text


def intent_of(question: str) -> Intent | None:
    """What the question asks of a runbook, or None when its words do not say."""
    lowered = question.lower()
    for intent, words in _QUESTION_WORDS:
        if any(_has(lowered, word) for word in words):
            return intent
    return None


def _heading_is(block: Block, words: Sequence[str]) -> bool:
    heading = block.section.lower()
    return bool(heading) and any(_has(heading, word) for word in words)


def choose(blocks: Sequence[Block], best: Block, intent: Intent | None) -> Choice:
    """The section of one document (`blocks`, in order) that answers `intent`, whole: a section
    whose heading names it, else every subsection under a heading that names it ("## Investigation
    Steps" over "### 1. …", "### 2. …"); `best` (the section the ranking found) when the intent is
    unknown or no heading names it."""
    if intent is None:
        return Choice((best,), best.section, "no intent in the question: the best-matching section")
    # A runbook with no diagnosis section diagnoses in its steps.
    for wanted in (intent, "fix") if intent == "diagnose" else (intent,):
        for block in blocks:
            if _heading_is(block, _HEADINGS[wanted]):
                return Choice((block,), block.section, f"intent {intent}: heading {block.section}")
        for block in blocks:
            if block.parent and _has_any(block.parent.lower(), _HEADINGS[wanted]):
                group = tuple(b for b in blocks if b.parent == block.parent)
                why = f"intent {intent}: heading {block.parent}, its {len(group)} subsections"
                return Choice(group, block.parent, why)
    return Choice((best,), best.section, f"intent {intent}: no section names it, the best-matching section")


def _has_any(text: str, words: Sequence[str]) -> bool:
    return any(_has(text, word) for word in words)


def notes(blocks: Sequence[Block], chosen: Choice) -> list[Block]:
    """The document's global notes (escalation, owners), except the chosen section itself."""
    taken = {b.id for b in chosen.blocks}
    return [b for b in blocks if b.id not in taken and _heading_is(b, _NOTE_HEADINGS)]
