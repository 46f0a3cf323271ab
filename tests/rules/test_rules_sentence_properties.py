"""Properties of the sentence check over the alerts of real sessions (tests/golden/sentence_check/): a
sentence written from an alert's own excerpt passes, in either language and any of its phrasings;
the same sentence with its state flipped or negated, its subject swapped, a connective, a severity
word, a count, a spelled-out number or a relative time put in is refused, each by its rule."""

from __future__ import annotations

import dataclasses
import re
from typing import NamedTuple

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import sentence_types as t
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import Sentence, SentenceMaterial
from tests.rules.sentence_sessions import material, sessions

_FIELD = re.compile(r"(\w+)=([^,]+)")


class Alert(NamedTuple):
    material: SentenceMaterial
    claim_id: str
    name: str
    service: str
    firing: bool
    current: str
    severity: str
    minutes: int
    others: tuple[str, ...]  # catalog services this session's claims never speak of
    alerts_of_service: int  # the service's alerts among the session's allowed claims


def _alerts() -> list[Alert]:
    out = []
    for key in sessions():
        mat = material(key)
        spoken = " ".join(c.text + " ".join(e.text for e in c.excerpts) for c in mat.claims)
        alerts = [(c, e) for c in mat.claims for e in c.excerpts if e.raw_path.startswith("$.alerts")]
        for claim, excerpt in alerts:
            if len(claim.excerpts) != 1:
                continue
            fields = dict(_FIELD.findall(excerpt.text))
            service = fields["service"].strip()
            out.append(
                Alert(
                    mat,
                    claim.claim_id,
                    excerpt.text.split(",")[0],
                    service,
                    fields["state"] == "firing",
                    fields["current"].strip(),
                    fields["severity"],
                    int(fields["duration"].rstrip("m")),
                    tuple(n for n in mat.catalog if n not in spoken),
                    sum(1 for _, e in alerts if f"service={service}," in e.text),
                )
            )
    return out


ALERTS = _alerts()
alerts = st.sampled_from(ALERTS)
languages = st.sampled_from(["en", "zh"])

PHRASES = {
    ("en", True): [
        "{s}'s {a} alert is firing.",
        "{s}'s {a} alert is still firing.",
        "The {a} alert on {s} is firing at {c}.",
    ],
    ("en", False): [
        "{s}'s {a} alert has resolved.",
        "The {a} alert on {s} has cleared.",
        "{a} on {s} is no longer firing.",
    ],
    ("zh", True): [
        "{s} 的 {a} 告警正在触发。",
        "{s} 的 {a} 告警仍在触发，当前 {c}。",
        "{s} 的 {a} 告警还在。",
    ],
    ("zh", False): [
        "{s} 的 {a} 告警已经恢复。",
        "{s} 的 {a} 告警已恢复，不再触发。",
        "{s} 的 {a} 告警恢复了。",
    ],
}
NEGATED = {
    ("en", True): "{s}'s {a} alert is not firing.",
    ("en", False): "{s}'s {a} alert has not resolved yet.",
    ("zh", True): "{s} 的 {a} 告警没有在触发。",
    ("zh", False): "{s} 的 {a} 告警还没有恢复。",
}
_EN = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"),
]
_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
_CN = "零一二三四五六七八九"


def english(n: int) -> str:
    if n < 20:
        return _EN[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f"-{_EN[ones]}" if ones else "")


def chinese(n: int) -> str:
    tens, ones = divmod(n, 10)
    if not tens:
        return _CN[ones]
    return ("" if tens == 1 else _CN[tens]) + "十" + (_CN[ones] if ones else "")


def _check(alert: Alert, text: str, language: str) -> set[str]:
    sentence = Sentence("finding", text, (alert.claim_id,))
    # one sentence is the whole answer here: no question, so none is taken for an echo of it
    result = check([sentence], dataclasses.replace(alert.material, language=language, question=""))
    return result.rules()


def _valid(alert: Alert, language: str, index: int) -> str:
    phrases = PHRASES[(language, alert.firing)]
    return phrases[index % len(phrases)].format(s=alert.service, a=alert.name, c=alert.current)


@settings(max_examples=150, deadline=None)
@given(alerts, languages, st.integers(0, 2))
def test_a_sentence_from_its_excerpt_passes(alert: Alert, language: str, index: int) -> None:
    assert _check(alert, _valid(alert, language, index), language) == set()


@settings(max_examples=150, deadline=None)
@given(alerts, languages, st.integers(0, 2))
def test_a_flipped_state_is_refused(alert: Alert, language: str, index: int) -> None:
    flipped = alert._replace(firing=not alert.firing)
    assert t.STATE in _check(alert, _valid(flipped, language, index), language)


@settings(max_examples=100, deadline=None)
@given(alerts, languages)
def test_a_negated_state_is_refused(alert: Alert, language: str) -> None:
    text = NEGATED[(language, alert.firing)].format(s=alert.service, a=alert.name)
    assert t.STATE in _check(alert, text, language)


@settings(max_examples=150, deadline=None)
@given(alerts, languages, st.integers(0, 2), st.data())
def test_a_swapped_subject_is_refused(alert: Alert, language: str, index: int, data: st.DataObject) -> None:
    other = data.draw(st.sampled_from(alert.others))
    text = _valid(alert._replace(service=other), language, index)
    assert t.SUBJECT in _check(alert, text, language)


CONNECTIVES = {
    "en": [" because of the last deploy.", ", which is making checkouts fail.", " and it led to the outage."],
    "zh": ["，因为流量上升。", "，导致下单失败。", "，这是由于上次发布。"],
}


@settings(max_examples=150, deadline=None)
@given(alerts, languages, st.integers(0, 2), st.integers(0, 2))
def test_an_inserted_connective_is_refused(alert: Alert, language: str, index: int, which: int) -> None:
    text = _valid(alert, language, index).rstrip(".。") + CONNECTIVES[language][which]
    assert t.CAUSAL in _check(alert, text, language)


@settings(max_examples=100, deadline=None)
@given(alerts, languages, st.integers(0, 2))
def test_a_severity_word_against_the_ref_is_refused(alert: Alert, language: str, index: int) -> None:
    word = {"en": (" It is minor.", " It is critical."), "zh": ("它不严重。", "它很严重。")}[language]
    text = _valid(alert, language, index) + word[alert.severity != "critical"]
    assert t.SEVERITY in _check(alert, text, language)


@settings(max_examples=100, deadline=None)
@given(alerts, languages, st.integers(2, 9))
def test_a_wrong_count_is_refused(alert: Alert, language: str, count: int) -> None:
    if count == alert.alerts_of_service:
        count += 1
    text = (
        f"{alert.service} has {english(count)} alerts."
        if language == "en"
        else f"{alert.service} 有{chinese(count)}个告警。"
    )
    assert t.QUANTITY in _check(alert, text, language)


@settings(max_examples=150, deadline=None)
@given(alerts, languages, st.integers(-9, 30).filter(lambda k: k != 0))
def test_a_wrong_spelled_number_is_refused(alert: Alert, language: str, shift: int) -> None:
    minutes = max(1, alert.minutes + shift)
    if minutes == alert.minutes:
        minutes += 1
    text = (
        f"The {alert.name} alert lasted {english(minutes)} minutes."
        if language == "en"
        else f"{alert.name} 告警持续了{chinese(minutes)}分钟。"
    )
    assert t.VALUE in _check(alert, text, language)


def test_the_right_spelled_number_passes() -> None:
    for alert in ALERTS:
        assert (
            _check(alert, f"The {alert.name} alert lasted {english(alert.minutes)} minutes.", "en") == set()
        )
        assert _check(alert, f"{alert.name} 告警持续了{chinese(alert.minutes)}分钟。", "zh") == set()


RELATIVE = {
    "en": [" since last night.", " an hour ago.", ", starting yesterday.", " just now."],
    "zh": ["，从昨晚开始。", "，刚才。", "，一小时前开始。", "，今天早上开始。"],
}


@settings(max_examples=150, deadline=None)
@given(alerts, languages, st.integers(0, 2), st.integers(0, 3))
def test_a_relative_time_is_refused(alert: Alert, language: str, index: int, which: int) -> None:
    text = _valid(alert, language, index).rstrip(".。") + RELATIVE[language][which]
    assert t.RELATIVE_TIME in _check(alert, text, language)


def test_every_alert_of_both_worlds_is_drawn_from() -> None:
    assert len(ALERTS) >= 30
    assert {a.firing for a in ALERTS} == {True, False}
    assert all(a.others for a in ALERTS)


WORDS = st.sampled_from(
    [
        *("is", "not", "no", "firing", "resolved", "because", "all", "every", "three", "restart", "minor"),
        *("since", "last", "night", "threshold", "current", "92%", "25m", "yes", "No", "—", ",", ".", '"'),
        *("告警", "没有", "已经恢复", "仍在", "导致", "所有", "三个", "重启", "轻微", "阈值", "当前", "昨晚"),
        *("，", "。", "“", "”", "payment-service", "HighCPUUsage", "gateway", "网关", "一次", "forty-two"),
    ]
)
KINDS = st.sampled_from([*(k.value for k in t.KINDS), "", "summary"])


@settings(max_examples=200, deadline=None)
@given(
    alerts,
    st.lists(st.tuples(KINDS, st.lists(WORDS | st.text(max_size=8), max_size=30), st.booleans()), max_size=5),
)
def test_any_sentence_is_checked_without_raising(
    alert: Alert, raw: list[tuple[str, list[str], bool]]
) -> None:
    sentences = [
        Sentence(kind, " ".join(words), (alert.claim_id,) if bound else ("claim-9",))
        for kind, words, bound in raw
    ]
    result = check(sentences, alert.material)
    assert len(result.sentences) == len(sentences)
    assert all(v.rule_id for v in result.violations)
