"""The answer guard, in Chinese and English: over-statements caught, honest phrasing left alone."""

from __future__ import annotations

from typing import Any

import pytest

from evigate.rules.guard import rewrite, safe_phrasing, scan
from tests.rules.session import NEG_EXCERPT, neg_binding

HIKARI_CLAIM: dict[str, Any] = {
    "claim_id": "claim-1",
    "claim_type": "negative_observation",
    "claim_text": "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志。",
    "support_level": "direct",
    "evidence_bindings": [neg_binding()],
}
DISK_CLAIM: dict[str, Any] = {
    "claim_id": "claim-2",
    "claim_type": "negative_observation",
    "claim_text": "当前查询未检索到 order-service 的磁盘告警。",
    "evidence_bindings": [
        {
            "raw_path": "$.no_evidence",
            "evidence_excerpt": "query_metrics returned no evidence; query=order-service disk",
        }
    ],
}

OVERSTATEMENTS_ZH = [
    ("inventory-service 的 HikariCP 连接池耗尽问题不存在。", "问题不存在"),
    ("已排除该问题，inventory-service 运行稳定。", "已排除"),
    ("经检查，确认没有 HikariCP 连接池耗尽日志。", "确认没有"),
    ("日志层面已排除 HikariCP 连接池耗尽。", "日志层面已排除"),
    ("可以排除 inventory-service 连接池耗尽的可能。", "可以排除"),
    ("inventory-service 不存在 HikariCP 连接池耗尽问题。", "不存在 HikariCP 连接池耗尽问题"),
    ("inventory-service 系统健康。", "系统健康"),
    ("连接池一切正常。", "一切正常"),
    ("inventory-service 没有出现连接池耗尽。", "没有出现连接池耗尽"),
    ("根因已排除。", "根因已排除"),
    ("我们排除了 HikariCP 的问题。", "排除了"),
]
OVERSTATEMENTS_EN = [
    ("The HikariCP pool exhaustion on inventory-service does not exist.", "does not exist"),
    ("Pool exhaustion has been ruled out for inventory-service.", "ruled out"),
    ("We can rule out HikariCP exhaustion.", "rule out"),
    (
        "Logs confirmed that there is no HikariCP exhaustion on inventory-service.",
        "confirmed that there is no",
    ),
    ("We confirmed no pool exhaustion.", "confirmed no"),
    ("The system is healthy.", "system is healthy"),
    ("inventory-service is completely healthy, the service is fine.", "service is completely healthy"),
    ("There is no problem with the HikariCP pool.", "There is no problem"),
    ("The issue doesn't exist.", "doesn't exist"),
    ("Everything is fine.", "Everything is fine"),
]
SAFE = [
    "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志。",
    "本次检索未发现匹配证据，建议扩大时间窗口后重新查询。",
    "当前查询未检索到与 inventory-service HikariCP 匹配的证据。",
    "无法排除 inventory-service 存在连接池耗尽的可能。",
    "尚未确认是否存在该问题。",
    "当前查询未检索到匹配日志，但这不代表问题不存在。",
    "未检索到不意味着已排除该问题。",
    "No hit in this query does not mean the issue does not exist.",
    "An empty result doesn't prove the pool exhaustion was ruled out.",
    "This query found no matching evidence for inventory-service HikariCP.",
    "Pool exhaustion cannot be ruled out from this query alone.",
    "We could not confirm there is no exhaustion.",
    "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。",
    "payment-service has a firing HighCPUUsage alert at 92% for 25m.",
    safe_phrasing("inventory-service HikariCP", "zh"),
    safe_phrasing("inventory-service HikariCP", "en"),
    safe_phrasing("", "zh") + safe_phrasing("", "en"),
]


@pytest.mark.parametrize(("text", "phrase"), OVERSTATEMENTS_ZH + OVERSTATEMENTS_EN)
def test_overstatement_is_found(text: str, phrase: str) -> None:
    (finding,) = scan(text, [HIKARI_CLAIM])
    assert phrase.lower() in finding.phrase.lower() or finding.phrase.lower() in phrase.lower()
    assert finding.sentence == text.strip()
    assert finding.claim_id == "claim-1"
    assert finding.language == ("zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en")


@pytest.mark.parametrize("text", SAFE)
def test_safe_phrasing_is_not_flagged(text: str) -> None:
    assert scan(text, [HIKARI_CLAIM]) == []


def test_finding_names_the_claim_it_concerns() -> None:
    text = "order-service 的磁盘告警问题不存在。HikariCP 连接池耗尽已排除。"
    findings = scan(text, [HIKARI_CLAIM, DISK_CLAIM])
    assert [f.claim_id for f in findings] == ["claim-2", "claim-1"]
    assert [f.subject for f in findings] == ["order-service disk", "inventory-service HikariCP"]


def test_rewrite_replaces_only_offending_sentences_zh() -> None:
    text = "查询结果如下。inventory-service 的连接池问题不存在。建议继续观察 30m。"
    findings = scan(text, [HIKARI_CLAIM])
    assert rewrite(text, findings, "zh") == (
        "查询结果如下。当前查询在日志中未检索到与 inventory-service HikariCP 匹配的证据。建议继续观察 30m。"
    )
    assert scan(rewrite(text, findings, "zh"), [HIKARI_CLAIM]) == []


def test_rewrite_replaces_only_offending_sentences_en() -> None:
    text = "Summary follows. HikariCP exhaustion has been ruled out. Keep watching the pool."
    findings = scan(text, [HIKARI_CLAIM])
    assert rewrite(text, findings, "en") == (
        "Summary follows. This query found no matching evidence in the logs for inventory-service HikariCP. "
        "Keep watching the pool."
    )


def test_without_a_negative_claim_the_sentence_is_still_reported() -> None:
    (finding,) = scan("The system is healthy.", [])
    assert finding.claim_id is None
    assert finding.safe_phrasing == "This query found no matching evidence."


def test_subject_falls_back_to_claim_text() -> None:
    claim = {
        "claim_id": "c",
        "claim_text": "当前查询未检索到 inventory-service 的慢查询日志。",
        "evidence_bindings": [],
    }
    (finding,) = scan("慢查询问题不存在。", [claim])
    assert finding.safe_phrasing == "当前查询未检索到与 inventory-service 的慢查询日志 匹配的证据。"
    assert NEG_EXCERPT  # the query= form is preferred when an excerpt carries it (see above)
