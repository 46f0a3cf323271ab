"""The slot checks (rules.slot_check): a model's text for a slot of code's draft keeps every one
of the slot's names and values and is in the answer's language; a copy of the draft is code's sentence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.rules import slot_check
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_types import Sentence

DRAFT_EN = "Yes. The HighCPUUsage alert of payment-service is firing at 92% (for 25m)."
DRAFT_ZH = "是的，payment-service 的 HighCPUUsage 告警正在触发，CPU 使用率为 92%。"
DRAFT_PLAIN = "Check the connection pool settings of the service."
DRAFT_PLAIN_ZH = "检查连接池配置。"


@pytest.mark.parametrize(
    ("text", "draft", "language", "rules"),
    [
        ("payment-service has had HighCPUUsage firing for 25m, at 92%.", DRAFT_EN, "en", []),
        ("CPU is at 92%.", DRAFT_EN, "en", [slot_check.SLOT_FACTS]),  # the service, alert and 25m left out
        ("Monitoring is a journey rather than a destination.", DRAFT_EN, "en", [slot_check.SLOT_FACTS]),
        ("The alert is firing.", DRAFT_EN, "en", [slot_check.SLOT_FACTS]),
        (
            "payment-service 的告警正在触发。",
            DRAFT_EN,
            "en",
            [slot_check.SLOT_LANGUAGE, slot_check.SLOT_FACTS],
        ),
        ("payment-service has HighCPUUsage firing, CPU at 92%.", DRAFT_ZH, "zh", [slot_check.SLOT_LANGUAGE]),
        ("payment-service 的 HighCPUUsage 告警在触发，CPU 为 92%。", DRAFT_ZH, "zh", []),
        ("payment-service 的 HighCPUUsage 告警在触发，CPU 为百分之九十二。", DRAFT_ZH, "zh", []),  # 92%
        ("Review the connection pool settings.", DRAFT_PLAIN, "en", []),
        ("Reflect on the broader picture first.", DRAFT_PLAIN, "en", [slot_check.SLOT_FACTS]),
        ("请检查连接池的配置。", DRAFT_PLAIN_ZH, "zh", []),
        ("请先反思全局。", DRAFT_PLAIN_ZH, "zh", [slot_check.SLOT_FACTS]),
        ("", DRAFT_EN, "en", [slot_check.SLOT_MISSING]),
    ],
)
def test_a_slot_text_holds_its_facts_in_the_answer_s_language(
    text: str, draft: str, language: str, rules: list[str]
) -> None:
    assert [rule for rule, _ in slot_check.violations(text, draft, language)] == rules


def test_a_copy_is_the_draft_after_case_whitespace_and_punctuation() -> None:
    assert slot_check.same_as_draft(
        "  yes.  the highcpuusage alert of payment-service is firing at 92% (for 25m). ", DRAFT_EN
    )
    # a dropped final stop or changed quotes and commas reword nothing
    assert slot_check.same_as_draft(DRAFT_EN.rstrip("."), DRAFT_EN)
    assert slot_check.same_as_draft(
        "Yes, the HighCPUUsage alert of payment-service is firing at 92% for 25m", DRAFT_EN
    )
    assert slot_check.same_as_draft(
        "将 `cache.ttl_seconds` 恢复为 3600", "将 cache.ttl_seconds 恢复为 3600。"
    )
    assert not slot_check.same_as_draft(
        "payment-service has had HighCPUUsage firing for 25m, at 92%.", DRAFT_EN
    )


def test_the_fixed_lines_are_no_slots() -> None:
    draft = [
        Sentence(SentenceKind.HEADLINE, DRAFT_EN, ("claim-1",)),
        Sentence(SentenceKind.NOTE, "Steps:", fixed_line="steps_header"),
        Sentence(SentenceKind.STEP, DRAFT_PLAIN, ("claim-2",)),
    ]
    assert slot_check.slots_of(draft) == [0, 2]


@given(st.text(alphabet=st.characters(whitelist_categories=("Ll", "Zs")), max_size=80))
def test_lowercase_prose_never_carries_a_draft_s_names_and_values(text: str) -> None:
    # the draft's key terms each hold a digit or a hyphen: plain words never carry one
    draft = "payment-service is at 92%."
    rules = {rule for rule, _ in slot_check.violations(text, draft, "en")}
    assert {slot_check.SLOT_FACTS, slot_check.SLOT_MISSING} & rules
