"""The sentence check's golden corpus (tests/golden/sentence_check/corpus.json) over real sessions of
the demo and tidewater worlds: no valid sentence is refused, every false one is, by the rule of its
class, and the false ones are of the kind the token check let through (no number or identifier the
session lacks)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from evigate.rules.numerals import is_number_words
from evigate.rules.sentence_check import check
from evigate.rules.text import critical_tokens
from tests.rules.sentence_sessions import corpus, material, sentences

CASES = corpus()
VALID = [c for c in CASES if c["valid"]]
FALSE = [c for c in CASES if not c["valid"]]
# One class per item of the false statements the token check let through.
FALSE_CLASSES = {
    "state_flip",
    "absence_over_finding",
    "causal_link",
    "consequence",
    "subject_swap",
    "role_swap",
    "relative_time",
    "spelled_number",
    "count",
    "severity",
    "action",
    "trend",
}


def _shown(result: Any) -> str:
    return "\n".join(f"{v.rule_id} [{v.field}] {v.token}: {v.message}" for v in result.violations)


def test_the_corpus_is_large_and_covers_both_languages() -> None:
    assert len(CASES) >= 150
    assert len(FALSE) >= 80
    assert len({c["id"] for c in CASES}) == len(CASES)
    for subset in (VALID, FALSE):
        languages = Counter(c["language"] for c in subset)
        assert languages["zh"] >= 40 and languages["en"] >= 40, languages
    by_class = Counter((c["class"], c["language"]) for c in FALSE)
    for name in FALSE_CLASSES:
        assert by_class[(name, "en")] >= 2 and by_class[(name, "zh")] >= 2, name
    assert {c["class"] for c in FALSE} == FALSE_CLASSES
    valid_classes = {c["class"] for c in VALID}
    assert {
        "yes_no",
        "readable_value",
        "runbook_steps",
        "absence",
        "could_not_check",
        "answer",
    } <= valid_classes


@pytest.mark.parametrize("case", VALID, ids=[c["id"] for c in VALID])
def test_a_valid_answer_is_never_refused(case: dict[str, Any]) -> None:
    result = check(sentences(case), material(case["session"], case["language"]))
    assert result.ok, _shown(result)


@pytest.mark.parametrize("case", FALSE, ids=[c["id"] for c in FALSE])
def test_a_false_statement_is_refused_by_its_rule(case: dict[str, Any]) -> None:
    result = check(sentences(case), material(case["session"], case["language"]))
    assert not result.ok
    assert result.rules() & set(case["rules"]), _shown(result)


@pytest.mark.parametrize("case", FALSE, ids=[c["id"] for c in FALSE])
def test_a_false_statement_adds_no_number_or_identifier(case: dict[str, Any]) -> None:
    """What makes the corpus hard: every digit and identifier it writes is already in the session."""
    session = material(case["session"])
    known = " ".join(
        [session.question]
        + [t for c in session.claims for t in (c.text, *(e.text for e in c.excerpts))]
        + [h.text for h in session.hypotheses]
    ).lower()
    for sentence in sentences(case):
        new = [t for t in critical_tokens(sentence.text) if t.lower() not in known and not is_number_words(t)]
        assert not new, new
