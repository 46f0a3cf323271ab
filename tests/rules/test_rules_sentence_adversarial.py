"""The sentence check's adversarial corpus (tests/golden/sentence_check/adversarial.json) over real
sessions of the demo and tidewater worlds: false statements phrased to slip past the first rules (state
words such as 'went away' or 处于触发状态, absences wider than their negative claim, causal words such
as 'is behind' or 源于, unobserved consequences for users, values given to a one-word catalog service
or to the upstream a log line names, values read as current that the excerpt gives as threshold, vague
relative times and counts, 'twice', 九成, severity and action phrasings), each refused by the rule of its
class and adding no number or identifier; and valid paraphrases in the same words and in the words
an on-call engineer or a model writes (a Chinese sentence over an English excerpt, "the timeouts
persist", "given the evidence"), never refused."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from evigate.rules.numerals import is_number_words
from evigate.rules.sentence_check import check
from evigate.rules.text import critical_tokens
from tests.rules.sentence_sessions import corpus, material, sentences
from tests.rules.test_rules_sentence_golden import FALSE_CLASSES

CASES = corpus("adversarial")
VALID = [c for c in CASES if c["valid"]]
FALSE = [c for c in CASES if not c["valid"]]


def _shown(result: Any) -> str:
    return "\n".join(f"{v.rule_id} [{v.field}] {v.token}: {v.message}" for v in result.violations)


def test_the_corpus_holds_every_class_in_both_languages() -> None:
    assert len(FALSE) >= 80 and len(VALID) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {c["session"] for c in CASES} <= {c["session"] for c in corpus()} | {
        c["session"] for c in CASES if material(c["session"]).claims
    }
    by_class = Counter((c["class"], c["language"]) for c in FALSE)
    for name in FALSE_CLASSES | {"definition", "vague_quantity"}:
        assert by_class[(name, "en")] >= 2 and by_class[(name, "zh")] >= 2, name
    valid_by_class = Counter((c["class"], c["language"]) for c in VALID)
    for name in ("definition", "vague_quantity"):  # the words those rules read, used truly
        assert valid_by_class[(name, "en")] >= 2 and valid_by_class[(name, "zh")] >= 2, name
    languages = Counter(c["language"] for c in VALID)
    assert languages["en"] >= 15 and languages["zh"] >= 15, languages


@pytest.mark.parametrize("case", VALID, ids=[c["id"] for c in VALID])
def test_a_valid_paraphrase_is_never_refused(case: dict[str, Any]) -> None:
    result = check(sentences(case), material(case["session"], case["language"]))
    assert result.ok, _shown(result)


@pytest.mark.parametrize("case", FALSE, ids=[c["id"] for c in FALSE])
def test_an_adversarial_statement_is_refused_by_its_rule(case: dict[str, Any]) -> None:
    result = check(sentences(case), material(case["session"], case["language"]))
    assert not result.ok, case["sentences"][0]["text"]
    assert result.rules() & set(case["rules"]), _shown(result)


@pytest.mark.parametrize("case", FALSE, ids=[c["id"] for c in FALSE])
def test_an_adversarial_statement_adds_no_number_or_identifier(case: dict[str, Any]) -> None:
    session = material(case["session"])
    known = " ".join(
        [session.question]
        + [t for c in session.claims for t in (c.text, *(e.text for e in c.excerpts))]
        + [h.text for h in session.hypotheses]
    ).lower()
    for sentence in sentences(case):
        new = [t for t in critical_tokens(sentence.text) if t.lower() not in known and not is_number_words(t)]
        assert not new, new
