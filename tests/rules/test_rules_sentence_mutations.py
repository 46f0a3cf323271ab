"""Properties of the sentence check over the valid answers of its corpora (tests/golden/sentence_check/
corpus.json and adversarial.json), real sentences over real sessions: each passes as written, and
the same sentence with its state flipped or negated, its service swapped for one the session's claims
never speak of, or a causal link, an unobserved consequence, a relative time, a severity word or an
action put in, is refused by the rule of that change."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import sentence_types as t
from evigate.rules.answer_facts import normalize
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import Sentence, SentenceMaterial
from tests.rules.sentence_sessions import corpus, material, sentences


class Valid(NamedTuple):
    case: str
    material: SentenceMaterial
    sentence: Sentence
    language: str


def _valid() -> list[Valid]:
    out = []
    for case in [*corpus(), *corpus("adversarial")]:
        if not case["valid"]:
            continue
        for sentence in sentences(case):
            if (
                sentence.kind in ("finding", "headline")
                and sentence.claim_ids
                and not sentence.hypothesis_ids
            ):
                mat = dataclasses.replace(material(case["session"], case["language"]), question="")
                out.append(Valid(case["id"], mat, sentence, case["language"]))
    return out


VALID = _valid()


def _rules(valid: Valid, text: str) -> set[str]:
    # one sentence is the whole answer: no question, so none is taken for an echo of it
    return check([dataclasses.replace(valid.sentence, text=text)], valid.material).rules()


def _end(text: str) -> tuple[str, str]:
    """The sentence without its final stop, and the stop."""
    match = re.search(r"[.。!！]\s*$", text)
    return (text[: match.start()], match.group().strip()) if match else (text, "")


def _bound_text(valid: Valid) -> str:
    claims = [valid.material.claims_by_id[c] for c in valid.sentence.claim_ids]
    return normalize(" ".join(x for c in claims for x in (c.text, *(e.text for e in c.excerpts))))


# state phrase → (flipped, negated); each applies only where the sentence holds it once
STATES_EN = {
    "is firing": ("has resolved", "is not firing"),
    "is still firing": ("has resolved", "is not firing"),
    "has resolved": ("is still firing", "has not resolved"),
    "has cleared": ("is still firing", "has not cleared"),
}
STATES_ZH = {
    "正在触发": ("已经恢复", "没有在触发"),
    "仍在触发": ("已经恢复", "没有在触发"),
    "已恢复": ("仍在触发", "还没有恢复"),
    "已经恢复": ("仍在触发", "还没有恢复"),
}


def _state_change(valid: Valid, which: int) -> str | None:
    table = STATES_EN if valid.language == "en" else STATES_ZH
    found = [p for p in table if valid.sentence.text.count(p) == 1]
    # one state phrase, and not one inside another ("is still firing" holds "firing" only once)
    found = [p for p in found if not any(p != q and p in q for q in found)]
    if len(found) != 1 or sum(valid.sentence.text.count(p) for p in table) > 1 + (len(found) > 1):
        return None
    if re.search(r"\b(?:no|not|none)\b|没有|未|不", valid.sentence.text):
        return None  # a negated sentence's state is not flipped by a word
    phrase = found[0]
    return valid.sentence.text.replace(phrase, table[phrase][which])


def _swap(valid: Valid) -> str | None:
    spoken = " ".join(c.text + " ".join(e.text for e in c.excerpts) for c in valid.material.claims).lower()
    others = [n for n in valid.material.catalog if n.lower() not in spoken]
    named = [n for n in valid.material.catalog if n in valid.sentence.text]
    if not others or len(named) != 1:
        return None
    return valid.sentence.text.replace(named[0], others[0])


def _append(en: str, zh: str) -> Callable[[Valid], str | None]:
    def change(valid: Valid) -> str | None:
        body, stop = _end(valid.sentence.text)
        return (
            body
            + (en if valid.language == "en" else zh)
            + (stop or ("." if valid.language == "en" else "。"))
        )

    return change


def _unless_bound(words: str, change: Callable[[Valid], str | None]) -> Callable[[Valid], str | None]:
    """The change, where no bound text already says `words` (a runbook may say 'roll back')."""
    return lambda valid: None if re.search(words, _bound_text(valid)) else change(valid)


MUTATIONS: dict[str, tuple[Callable[[Valid], str | None], frozenset[str]]] = {
    "flipped": (lambda v: _state_change(v, 0), frozenset({t.STATE, t.YES_NO})),
    "negated": (lambda v: _state_change(v, 1), frozenset({t.STATE, t.YES_NO})),
    "swapped": (_swap, frozenset({t.SUBJECT})),
    "causal": (
        _unless_bound(r"deploy", _append(" because of the last deploy", "，这是因为上次发布")),
        frozenset({t.CAUSAL}),
    ),
    "consequence": (
        _append(", and customers cannot check out", "，导致用户无法下单"),
        frozenset({t.CAUSAL}),
    ),
    "relative_time": (_append(" since last night", "，从昨晚开始"), frozenset({t.RELATIVE_TIME})),
    "severity": (
        _unless_bound(r"severity=(?:info|low|none)", _append("; nothing urgent", "，不紧急")),
        frozenset({t.SEVERITY}),
    ),
    "action": (
        _unless_bound(r"roll|回滚|回退", _append("; roll back the last deploy", "，建议回滚")),
        frozenset({t.ACTION}),
    ),
}


def _pairs() -> list[tuple[str, int, str]]:
    out = []
    for name, (change, _) in MUTATIONS.items():
        for index, valid in enumerate(VALID):
            text = change(valid)
            if text is not None and text != valid.sentence.text:
                out.append((name, index, text))
    return out


PAIRS = _pairs()


def test_every_mutation_applies_to_many_valid_sentences_of_both_languages() -> None:
    assert len(VALID) >= 100
    for name in MUTATIONS:
        languages = {VALID[i].language for n, i, _ in PAIRS if n == name}
        assert languages == {"en", "zh"}, name
        assert sum(1 for n, _, _ in PAIRS if n == name) >= 10, name


@pytest.mark.parametrize("valid", VALID, ids=[v.case for v in VALID])
def test_a_valid_sentence_passes(valid: Valid) -> None:
    assert _rules(valid, valid.sentence.text) == set()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PAIRS))
def test_every_mutation_of_a_valid_sentence_is_refused_by_its_rule(pair: tuple[str, int, str]) -> None:
    name, index, text = pair
    refused = _rules(VALID[index], text)
    assert refused & MUTATIONS[name][1], (name, text, refused)


def test_every_mutation_of_every_valid_sentence_is_refused() -> None:
    """Each mutation over every sentence it applies to, not only those hypothesis draws."""
    missed = [(n, t_) for n, i, t_ in PAIRS if not (_rules(VALID[i], t_) & MUTATIONS[n][1])]
    assert not missed, missed[:10]
