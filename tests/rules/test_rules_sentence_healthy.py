"""A yes / no to "is it healthy?" ("一切正常吗？"): yes means nothing is wrong, so a yes over a firing
alert is refused by sentence.yes_no, and a no over it passes."""

from __future__ import annotations

import dataclasses

import pytest

from evigate.rules import sentence_check
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_types import YES_NO, Sentence
from tests.rules.sentence_sessions import material

SESSION = "demo/sv-order-en"  # order-service: HighErrorRate and HighLatency firing
FINDING = "order-service's HighErrorRate alert is firing at 7.8%."
FINDING_ZH = "order-service 的 HighErrorRate 告警正在触发（7.8%）。"

HEALTHY = [
    ("Is order-service healthy?", "en", FINDING, "Yes. ", "No. "),
    ("Is everything OK with order-service?", "en", FINDING, "Yes. ", "No. "),
    ("order-service 一切正常吗？", "zh", FINDING_ZH, "是的，", "不是，"),
    ("order-service 现在没问题吧？", "zh", FINDING_ZH, "是的，", "不是，"),
]


def _rules(question: str, language: str, text: str) -> set[str]:
    built = dataclasses.replace(material(SESSION), question=question, language=language)
    result = sentence_check.check([Sentence(SentenceKind.HEADLINE, text, ("claim-1",))], built)
    return result.rules()


@pytest.mark.parametrize(("question", "language", "finding", "yes", "no"), HEALTHY)
def test_a_yes_to_is_it_healthy_over_a_firing_alert_is_refused(
    question: str, language: str, finding: str, yes: str, no: str
) -> None:
    assert YES_NO in _rules(question, language, yes + finding)


@pytest.mark.parametrize(("question", "language", "finding", "yes", "no"), HEALTHY)
def test_a_no_to_is_it_healthy_over_a_firing_alert_passes(
    question: str, language: str, finding: str, yes: str, no: str
) -> None:
    assert _rules(question, language, no + finding) == set()


def test_has_it_recovered_to_normal_still_asks_whether_it_resolved() -> None:
    """恢复正常了吗: the alert is firing, so 'yes' is refused and 'no' passes, as before."""
    question = "order-service 的 HighErrorRate 告警恢复正常了吗？"
    assert YES_NO in _rules(question, "zh", "是的，" + FINDING_ZH)
    assert _rules(question, "zh", "没有，" + FINDING_ZH) == set()
