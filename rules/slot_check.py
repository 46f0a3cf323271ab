"""The checks a model's slot sentence needs beyond the sentence check (rules.sentence_check).

The LLM Composer rewrites code's draft one slot at a time: a slot is a draft sentence that states
facts (not a fixed line), and the model's text for it keeps the draft's kind and ids. The sentence
check refuses what the bound claims do not hold; it cannot refuse a sentence that holds nothing at
all ("monitoring is a journey" states no fact to refuse). So a slot's text must also:

- keep the slot's facts: every one of the draft's key terms (its names and values: a word with a
  digit, a hyphen, an underscore, a dot or an inner capital), or, for a draft without any, one of
  its content words (Chinese: a two-character run). The model rewrites the words around the facts;
  a text that drops one (quotes another line of the same claim, leaves a value out) would lose what
  code's sentence said, and one that shares nothing with the slot says something else;
- be in the answer's language: Chinese text for `zh`; for `en`, no Chinese character that the draft
  lacks.

A text that is the draft itself (after case and whitespace) passes but is code's sentence, not the
model's (`same_as_draft`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from evigate.rules.answer_facts import normalize
from evigate.rules.sentence_types import Sentence

SLOT_FACTS = "slot.facts@1"
SLOT_LANGUAGE = "slot.language@1"
SLOT_MISSING = "slot.missing@1"
RULES: dict[str, str] = {
    SLOT_FACTS: "a slot sentence that leaves out a name or value of its draft, or shares no word with it",
    SLOT_LANGUAGE: "a slot sentence not in the answer's language",
    SLOT_MISSING: "the reply gave no text for the slot",
}

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/%-]*")
_WORD = re.compile(r"[a-z]{5,}")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
# content words every sentence may use: sharing one of them is sharing nothing
_COMMON = frozenset(
    {"there", "their", "which", "these", "those", "about", "would", "could", "should", "where", "query"}
)


def slots_of(draft: Sequence[Sentence]) -> list[int]:
    """The places of the draft's sentences that a model may rewrite: every one but the fixed lines."""
    return [i for i, sentence in enumerate(draft) if not sentence.fixed_line]


def key_terms(draft_text: str) -> set[str]:
    """The draft's names and values (lowercased): a term with a digit, a hyphen, an underscore, a
    dot or a capital after its first letter."""
    terms = set()
    for match in _TERM.finditer(draft_text):
        term = match.group().rstrip(".:/")
        if (
            any(ch.isdigit() for ch in term)
            or any(ch in term for ch in "-_.")
            or term[1:] != term[1:].lower()
        ):
            terms.add(term.lower())
    return terms


def _content(draft_text: str) -> set[str]:
    lowered = normalize(draft_text)
    words = {w for w in _WORD.findall(lowered) if w not in _COMMON}
    bigrams = {run[i : i + 2] for run in _CJK_RUN.findall(lowered) for i in range(len(run) - 1)}
    return words | bigrams


def same_as_draft(text: str, draft_text: str) -> bool:
    """The text is the draft's (case, whitespace, punctuation and symbols aside): a copy is code's
    sentence, and so is one that only drops a stop or changes a quote mark."""
    return _letters(text) == _letters(draft_text)


def _letters(text: str) -> str:
    return "".join(
        ch for ch in text.casefold() if not ch.isspace() and unicodedata.category(ch)[0] not in "PS"
    )


def violations(text: str, draft_text: str, language: str) -> list[tuple[str, str]]:
    """(rule, token) of each of these checks the slot text fails; none for a good one."""
    found: list[tuple[str, str]] = []
    if not text.strip():
        return [(SLOT_MISSING, "")]
    if language == "zh":
        if not _CJK.search(text):
            found.append((SLOT_LANGUAGE, text[:40]))
    elif _CJK.search(text) and not _CJK.search(draft_text):
        found.append((SLOT_LANGUAGE, "".join(_CJK.findall(text))[:20]))
    lowered = normalize(text)
    terms = key_terms(draft_text)
    if terms:
        spaced_out = "".join(lowered.split())  # "92 %" keeps 92%
        left_out = sorted(term for term in terms if term not in lowered and term not in spaced_out)
        if left_out:
            found.append((SLOT_FACTS, ", ".join(left_out)[:80]))
    else:
        content = _content(draft_text)
        if content and not any(word in lowered for word in content):
            found.append((SLOT_FACTS, draft_text[:40]))
    return found
