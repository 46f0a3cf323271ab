"""The sentence check's adversarial corpus (tests/golden/sentence_check/adversarial.json) over real
sessions of the demo and tidewater worlds: false statements phrased to slip past the first rules (state
words such as 'went away' or 处于触发状态, absences wider than their negative claim, causal words such
as 'is behind' or 源于, unobserved consequences for users, values given to a one-word catalog service
or to the upstream a log line names, values read as current that the excerpt gives as threshold, vague
relative times and counts, 'twice', 九成, severity and action phrasings), each refused by the rule of its
class and adding no number or identifier; and valid paraphrases in the same words, never refused."""

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
# The cases the first rules get wrong, until the rules that catch them land.
KNOWN_FAILING = frozenset(
    [
        "a-f-en-absence_over_finding-012",
        "a-f-en-absence_over_finding-014",
        "a-f-en-absence_over_finding-015",
        "a-f-en-absence_over_finding-016",
        "a-f-en-action-080",
        "a-f-en-action-081",
        "a-f-en-action-082",
        "a-f-en-action-083",
        "a-f-en-action-084",
        "a-f-en-action-085",
        "a-f-en-causal_link-022",
        "a-f-en-causal_link-023",
        "a-f-en-causal_link-024",
        "a-f-en-causal_link-025",
        "a-f-en-consequence-030",
        "a-f-en-consequence-031",
        "a-f-en-consequence-032",
        "a-f-en-consequence-033",
        "a-f-en-count-065",
        "a-f-en-count-066",
        "a-f-en-count-067",
        "a-f-en-relative_time-049",
        "a-f-en-relative_time-050",
        "a-f-en-relative_time-051",
        "a-f-en-relative_time-052",
        "a-f-en-relative_time-053",
        "a-f-en-role_swap-043",
        "a-f-en-role_swap-044",
        "a-f-en-role_swap-045",
        "a-f-en-severity-071",
        "a-f-en-severity-072",
        "a-f-en-severity-073",
        "a-f-en-severity-074",
        "a-f-en-severity-075",
        "a-f-en-spelled_number-058",
        "a-f-en-spelled_number-059",
        "a-f-en-spelled_number-060",
        "a-f-en-state_flip-001",
        "a-f-en-state_flip-002",
        "a-f-en-state_flip-003",
        "a-f-en-state_flip-004",
        "a-f-en-state_flip-005",
        "a-f-en-subject_swap-037",
        "a-f-en-subject_swap-038",
        "a-f-en-subject_swap-039",
        "a-f-en-trend-091",
        "a-f-en-trend-092",
        "a-f-zh-absence_over_finding-017",
        "a-f-zh-absence_over_finding-018",
        "a-f-zh-absence_over_finding-019",
        "a-f-zh-absence_over_finding-020",
        "a-f-zh-absence_over_finding-021",
        "a-f-zh-action-086",
        "a-f-zh-action-087",
        "a-f-zh-action-088",
        "a-f-zh-action-089",
        "a-f-zh-action-090",
        "a-f-zh-causal_link-026",
        "a-f-zh-causal_link-027",
        "a-f-zh-causal_link-028",
        "a-f-zh-causal_link-029",
        "a-f-zh-consequence-034",
        "a-f-zh-consequence-035",
        "a-f-zh-consequence-036",
        "a-f-zh-count-068",
        "a-f-zh-count-069",
        "a-f-zh-count-070",
        "a-f-zh-relative_time-054",
        "a-f-zh-relative_time-055",
        "a-f-zh-relative_time-056",
        "a-f-zh-relative_time-057",
        "a-f-zh-role_swap-046",
        "a-f-zh-role_swap-047",
        "a-f-zh-role_swap-048",
        "a-f-zh-severity-076",
        "a-f-zh-severity-077",
        "a-f-zh-severity-078",
        "a-f-zh-severity-079",
        "a-f-zh-spelled_number-062",
        "a-f-zh-spelled_number-063",
        "a-f-zh-state_flip-006",
        "a-f-zh-state_flip-007",
        "a-f-zh-state_flip-008",
        "a-f-zh-state_flip-009",
        "a-f-zh-state_flip-010",
        "a-f-zh-state_flip-011",
        "a-f-zh-subject_swap-040",
        "a-f-zh-subject_swap-041",
        "a-f-zh-subject_swap-042",
        "a-f-zh-trend-093",
        "a-v-en-absence-017",
        "a-v-en-paraphrase-000",
        "a-v-en-paraphrase-001",
        "a-v-en-paraphrase-006",
    ]
)
VALID = [
    pytest.param(c, id=c["id"], marks=[pytest.mark.xfail(strict=True)] if c["id"] in KNOWN_FAILING else [])
    for c in CASES
    if c["valid"]
]
FALSE = [
    pytest.param(c, id=c["id"], marks=[pytest.mark.xfail(strict=True)] if c["id"] in KNOWN_FAILING else [])
    for c in CASES
    if not c["valid"]
]


def _shown(result: Any) -> str:
    return "\n".join(f"{v.rule_id} [{v.field}] {v.token}: {v.message}" for v in result.violations)


def test_the_corpus_holds_every_class_in_both_languages() -> None:
    false = [c for c in CASES if not c["valid"]]
    assert len(false) >= 80 and len(CASES) - len(false) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {c["session"] for c in CASES} <= {c["session"] for c in corpus()} | {
        c["session"] for c in CASES if material(c["session"]).claims
    }
    by_class = Counter((c["class"], c["language"]) for c in false)
    for name in FALSE_CLASSES:
        assert by_class[(name, "en")] >= 2 and by_class[(name, "zh")] >= 2, name
    languages = Counter(c["language"] for c in CASES if c["valid"])
    assert languages["en"] >= 15 and languages["zh"] >= 15, languages


@pytest.mark.parametrize("case", VALID)
def test_a_valid_paraphrase_is_never_refused(case: dict[str, Any]) -> None:
    result = check(sentences(case), material(case["session"], case["language"]))
    assert result.ok, _shown(result)


@pytest.mark.parametrize("case", FALSE)
def test_an_adversarial_statement_is_refused_by_its_rule(case: dict[str, Any]) -> None:
    result = check(sentences(case), material(case["session"], case["language"]))
    assert not result.ok, case["sentences"][0]["text"]
    assert result.rules() & set(case["rules"]), _shown(result)


@pytest.mark.parametrize("case", [c for c in CASES if not c["valid"]], ids=lambda c: c["id"])
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
