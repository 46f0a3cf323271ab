"""The sentence check: every sentence of a structured answer says what its own bound claims say.

Each sentence carries its kind and the ids of the allowed claims and hypotheses it expresses
(rules.sentence_types). It is checked against those claims and their verified excerpts only, never
against the whole session:

- binding: a sentence is bound to allowed claims or hypotheses, or is a fixed line composed by code;
  its kind fits what it is bound to (an absence needs a negative claim, a could-not-check line a
  failed call, a hypothesis a hypothesis and a hedge);
- meaning (rules.sentence_meaning): its names are the subjects of its claims, its state words agree
  with their states, its values are in their excerpts (spelled-out numbers and relative times
  included; a current value is not a threshold), its causal, trend, severity and quantity words and
  its actions are stated by them;
- tokens: today's answer check (rules.answer_check) on its text, against the whole allowed material,
  as the layer beneath; and the answer as a whole is not empty, in the user's language, and more
  than the question.

`check` never raises on adversarial input (a model's sentences).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Protocol

from evigate.rules import answer_check
from evigate.rules import sentence_types as t
from evigate.rules.answer_check import AnswerMaterial
from evigate.rules.answer_facts import FactIndex, normalize
from evigate.rules.enums import ClaimType, SentenceKind
from evigate.rules.sentence_meaning import SentenceRules
from evigate.rules.sentence_reading import read
from evigate.rules.sentence_types import (
    FIXED_LINES,
    KINDS,
    RULES,
    Sentence,
    SentenceCheckResult,
    SentenceMaterial,
    SentenceViolation,
)
from evigate.rules.sentence_units import Prepared

__all__ = ["RULES", "check", "token_material"]


def check(sentences: Sequence[Sentence], material: SentenceMaterial) -> SentenceCheckResult:
    """Every violation of each sentence against its bound claims, and of the answer as a whole."""
    prepared = Prepared(material)
    # "a 10000-message threshold", "non-critical", "still-firing": words, not identifiers
    sentences = [
        s if s.fixed_line else dataclasses.replace(s, text=_compounds(s.text, prepared)) for s in sentences
    ]
    tokens = token_material(material)
    # the token layer's index of the whole material, from the claims' own indexes
    tools = {e.tool for c in material.claims for e in c.excerpts}
    whole = FactIndex.union(
        [FactIndex([material.question, *tools]), *(prepared.claim_index(c.claim_id) for c in material.claims)]
    )
    layer = answer_check.check_texts([s.text for s in sentences], tokens, whole)
    per_sentence = []
    for index, (sentence, beneath) in enumerate(zip(sentences, layer, strict=True)):
        found = _check_one(index, sentence, prepared)
        if not sentence.fixed_line:
            found.extend(SentenceViolation(v.rule_id, index, v.token, v.message) for v in beneath.violations)
        per_sentence.append(tuple(dict.fromkeys(found)))
    joined = "\n".join(s.text for s in sentences)
    answer = tuple(
        SentenceViolation(v.rule_id, -1, v.token, v.message)
        for v in answer_check.answer_rules(joined, tokens)
    )
    return SentenceCheckResult(tuple(per_sentence), answer)


_COMPOUND = re.compile(
    r"(?<![\w.-])(?:\d+(?:\.\d+)?|non|semi|self|well|now|still|already|half|long|short|fully|partly|low|high)"
    r"(?:-[a-z]{1,12})+(?![\w-]|\.\w)",
    re.IGNORECASE,
)


def _compounds(text: str, prepared: Prepared) -> str:
    """The text with its hyphenated compounds of a number or common prefix and words ("a 25-minute
    alert", "non-critical", "still-firing") written as words; a name the session knows stays whole."""
    if "-" not in text:
        return text

    def split(match: re.Match[str]) -> str:
        word = match.group()
        if prepared.names.find(word.lower()) or word.lower() in prepared.known_text:
            return word
        return word.replace("-", " ")

    return _COMPOUND.sub(split, text)


def token_material(material: SentenceMaterial) -> AnswerMaterial:
    """The allowed material of the token layer: the question, every allowed claim's text and
    excerpts, the tools that returned them, and the allowed hypotheses."""
    facts = [material.question]
    for claim in material.claims:
        facts.append(claim.text)
        facts.extend(e.text for e in claim.excerpts)
        facts.extend(e.tool for e in claim.excerpts)
    return AnswerMaterial(
        facts=tuple(f for f in facts if f),
        hypotheses=tuple(h.text for h in material.hypotheses),
        root_causes=tuple(c.text for c in material.claims if c.claim_type == ClaimType.ROOT_CAUSE),
        language=material.language,
        question=material.question,
    )


def _check_one(index: int, sentence: Sentence, prepared: Prepared) -> list[SentenceViolation]:
    out: list[SentenceViolation] = []

    def fail(rule: str, token: str, detail: str = "") -> None:
        meaning = RULES.get(rule) or answer_check.RULES[rule]
        out.append(SentenceViolation(rule, index, token, meaning + (f": {detail}" if detail else "")))

    material = prepared.material
    if sentence.fixed_line:
        _fixed_line(sentence, material.language, fail)
        return out
    if not sentence.text.strip():
        fail(answer_check.EMPTY, "")
        return out
    if sentence.kind not in KINDS:
        fail(t.KIND, sentence.kind, "unknown kind")
    claims = [c for c in sentence.claim_ids if c in material.claims_by_id]
    hypotheses = [h for h in sentence.hypothesis_ids if h in material.hypotheses_by_id]
    for unknown in [c for c in sentence.claim_ids if c not in claims] + [
        h for h in sentence.hypothesis_ids if h not in hypotheses
    ]:
        fail(t.UNKNOWN_ID, unknown)
    if not claims and not hypotheses:
        fail(t.UNBOUND, sentence.text[:80])
        return out
    hedged = answer_check.is_hedged(sentence.text)
    _kind(sentence.kind, [material.claims_by_id[c] for c in claims], hypotheses, hedged, fail)
    reading = read(sentence.text, prepared)
    out.extend(SentenceRules(prepared, index, sentence.kind, reading, claims, hypotheses, hedged).run())
    return out


def _fixed_line(sentence: Sentence, language: str, fail: _Fail) -> None:
    texts = FIXED_LINES.get(sentence.fixed_line)
    if sentence.kind != SentenceKind.NOTE:
        fail(t.FIXED_LINE, sentence.fixed_line, "a fixed line is a note")
    elif texts is None:
        fail(t.FIXED_LINE, sentence.fixed_line, "unknown fixed line")
    elif normalize(sentence.text).strip() != normalize(texts.get(language, texts["en"])).strip():
        fail(t.FIXED_LINE, sentence.text[:80], f"expected {texts.get(language, texts['en'])!r}")


def _kind(kind: str, claims: list[t.ClaimFacts], hypotheses: list[str], hedged: bool, fail: _Fail) -> None:
    if kind == SentenceKind.ABSENCE and not any(c.negative for c in claims):
        fail(t.KIND, kind, "an absence needs a bound negative claim")
    elif kind == SentenceKind.COULD_NOT_CHECK and not any(c.failed for c in claims):
        fail(t.KIND, kind, "a could-not-check line needs a bound failed call")
    elif kind == SentenceKind.HYPOTHESIS and not hypotheses:
        fail(t.KIND, kind, "a hypothesis needs a bound hypothesis")
    elif kind == SentenceKind.STEP and not hypotheses and not any(c.runbook for c in claims):
        fail(t.KIND, kind, "a step comes from a bound runbook claim or hypothesis")
    elif kind in (SentenceKind.HEADLINE, SentenceKind.FINDING) and not claims:
        fail(t.HEDGE, kind, "a sentence bound only to hypotheses is a hypothesis")
    if kind == SentenceKind.HYPOTHESIS and not hedged:
        fail(t.HEDGE, kind, "say that it is unconfirmed")


class _Fail(Protocol):
    def __call__(self, rule: str, token: str, detail: str = "") -> None: ...
