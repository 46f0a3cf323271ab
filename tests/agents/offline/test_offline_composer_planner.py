"""OfflineComposer templates and OfflinePlanner skill selection."""

from __future__ import annotations

import pytest

from evigate.rules import guard
from evigate.server.agents.base import JSON, Skill
from evigate.server.agents.offline.composer import OfflineComposer, compose
from evigate.server.agents.offline.planner import OfflinePlanner
from evigate.server.deadline import Deadline
from tests.agents.offline.demo_catalog import TEST_CATALOG

POSITIVE: JSON = {
    "claim_id": "claim-1",
    "claim_type": "observation",
    "claim_text": "payment-service 当前存在 HighCPUUsage 告警（state=firing, current=92%, duration=25m）。",
    "support_level": "direct",
    "evidence_bindings": [],
}
NEGATIVE: JSON = {
    "claim_id": "claim-2",
    "claim_type": "negative_observation",
    "claim_text": "当前查询未检索到 inventory-service 的 HikariCP 连接池耗尽日志。",
    "support_level": "direct",
    "evidence_bindings": [
        {
            "source_invocation_id": 2,
            "tool_name": "query_logs",
            "raw_path": "$.no_evidence",
            "evidence_excerpt": "query_logs returned no evidence; evidence_status=no_evidence; "
            "query=inventory-service HikariCP; service=inventory-service; keyword=HikariCP; total=0",
        }
    ],
}
NEGATIVE_EN: JSON = {
    **NEGATIVE,
    "claim_text": (
        "This query found no matching evidence of HikariCP connection pool exhaustion logs"
        " for inventory-service."
    ),
}


def composer_input(verdict: str = "PASS", language: str = "zh", **extra: object) -> JSON:
    data: JSON = {
        "original_query": "q",
        "language": language,
        "verdict": verdict,
        "allowed_claims": [],
        "allowed_hypotheses": [],
        "missing_info": [],
        "recommended_actions": [],
        "rationale": "",
    }
    data.update(extra)
    return data


def test_pass_repeats_allowed_claims_only() -> None:
    out = compose(composer_input(allowed_claims=[POSITIVE]))
    assert set(out) == {
        "answer_summary",
        "recommended_actions",
        "user_facing_answer",
        "sentences",
        "language",
    }
    assert out["answer_summary"] == POSITIVE["claim_text"]  # a claim no excerpt of which is phrased
    assert out["user_facing_answer"] == f"{POSITIVE['claim_text']} [1]"
    assert [s["claim_ids"] for s in out["sentences"]] == [["claim-1"]]
    assert "置信度" not in out["user_facing_answer"]


def test_negative_is_scoped_and_guard_clean() -> None:
    for claim, language in ((NEGATIVE, "zh"), (NEGATIVE_EN, "en")):
        out = compose(composer_input(language=language, allowed_claims=[claim]))
        text = out["user_facing_answer"]
        assert claim["claim_text"] in text
        assert guard.scan(text, [claim]) == []
        assert guard.scan(out["answer_summary"], [claim]) == []


@pytest.mark.parametrize(
    "text",
    [
        "inventory-service 的 HikariCP 问题不存在。",
        "已排除 inventory-service 的 HikariCP 问题。",
        "HikariCP was ruled out.",
    ],
)
def test_overstated_negative_claim_is_replaced_by_the_safe_phrase(text: str) -> None:
    claim = {**NEGATIVE, "claim_text": text}
    out = compose(composer_input(allowed_claims=[claim]))
    assert text not in out["user_facing_answer"]
    assert guard.scan(out["user_facing_answer"], [claim]) == []


def test_low_confidence_and_reject_are_announced() -> None:
    low = compose(composer_input("LOW_CONFID", allowed_claims=[POSITIVE]))
    assert low["user_facing_answer"].startswith("证据不足，以下结论置信度较低。")
    assert low["answer_summary"] == POSITIVE["claim_text"]
    rejected = compose(
        composer_input("REJECT", missing_info=["query_logs 调用失败（timeout），无法确认该查询的结果。"])
    )
    assert rejected["user_facing_answer"].startswith("没有通过校验的证据，无法给出可靠结论。")
    assert "query_logs 调用失败" in rejected["user_facing_answer"]
    english = compose(composer_input("LOW_CONFID", "en", allowed_claims=[NEGATIVE_EN]))
    assert english["user_facing_answer"].startswith("The evidence is insufficient")


def test_only_evidence_collection_actions_survive() -> None:
    actions = [
        {"action_text": "稍后重试 query_logs(service=inventory-service)", "reason": "调用失败"},
        {"action_text": "重启 inventory-service", "reason": "x"},
        {"action_text": "Increase the HikariCP maximumPoolSize", "reason": "x"},
        {"action_text": "Check whether log shipping covers inventory-service", "reason": "scope"},
    ]
    out = compose(composer_input(recommended_actions=actions))
    assert [a["action_text"] for a in out["recommended_actions"]] == [
        "稍后重试 query_logs(service=inventory-service)",
        "Check whether log shipping covers inventory-service",
    ]


def test_hypotheses_are_labelled_unconfirmed() -> None:
    out = compose(
        composer_input(
            allowed_claims=[POSITIVE], allowed_hypotheses=[{"hypothesis_text": "GC 压力", "reason": "r"}]
        )
    )
    assert "未经证实" in out["user_facing_answer"] and "GC 压力" in out["user_facing_answer"]


def test_nothing_allowed() -> None:
    out = compose(composer_input("REJECT"))
    assert "本次没有可以确认的结论" in out["user_facing_answer"]
    assert out["recommended_actions"] == []


async def test_composer_stage() -> None:
    output = await OfflineComposer().compose(composer_input(allowed_claims=[POSITIVE]), Deadline.none())
    assert output.prompt_version == "offline-composer-v2"


SKILLS = [
    Skill(
        "check-service-alerts",
        "alerts",
        ("告警", "alert", "alerts", "firing"),
        (),
        ("query_metrics: alerts",),
        ("query_metrics",),
    ),
    Skill("check-service-logs", "logs", ("日志", "log", "logs"), (), ("query_logs: logs",), ("query_logs",)),
    Skill(
        "diagnose-high-cpu",
        "cpu",
        ("CPU", "使用率", "load", "GC"),
        ("HighCPUUsage",),
        ("query_metrics: HighCPUUsage alert", "query_logs: GC logs", "lookup_knowledge: runbook"),
        ("query_metrics", "query_logs", "lookup_knowledge"),
    ),
    Skill(
        "diagnose-mysql-connection-pool",
        "pool",
        ("HikariCP", "连接池", "connection pool"),
        ("MySQLConnectionsHigh",),
        ("query_logs: pool logs", "query_metrics: alerts", "lookup_knowledge: runbook"),
        ("query_logs", "query_metrics", "lookup_knowledge"),
    ),
    Skill(
        "diagnose-memory",
        "memory",
        ("OOM", "OutOfMemoryError", "内存"),
        ("HighMemoryUsage",),
        ("query_logs: OOM",),
        ("query_logs",),
    ),
]


@pytest.mark.parametrize(
    "query,skill",
    [
        ("payment-service 现在有 HighCPUUsage 告警吗？", "diagnose-high-cpu"),
        ("Is HighCPUUsage firing on payment-service?", "diagnose-high-cpu"),
        ("inventory-service 有没有 HikariCP 连接池耗尽的日志？", "diagnose-mysql-connection-pool"),
        ("Any HikariCP pool exhaustion logs for inventory-service?", "diagnose-mysql-connection-pool"),
        ("user-service 有 OutOfMemoryError 日志吗？", "diagnose-memory"),
        ("order-service 有 ERROR 日志吗？", "check-service-logs"),
        ("现在有哪些告警在触发？", "check-service-alerts"),
        ("Is the upload queue stuck?", None),
        ("What is the weather today?", None),
    ],
)
async def test_skill_selection(query: str, skill: str | None) -> None:
    language = "en" if query.isascii() else "zh"
    plan = (await OfflinePlanner(catalog=TEST_CATALOG).plan(query, language, SKILLS, Deadline.none())).data
    assert set(plan) == {"selected_skill", "selection_reason", "plan", "reasoning", "tool_calls"}
    assert plan["selected_skill"] == skill
    assert plan["selection_reason"] and plan["reasoning"] and plan["plan"]


async def test_plan_is_narrowed_to_the_question() -> None:
    planner = OfflinePlanner(catalog=TEST_CATALOG)
    plan = (
        await planner.plan(
            "inventory-service 有没有 HikariCP 连接池耗尽的日志？", "zh", SKILLS, Deadline.none()
        )
    ).data
    steps = plan["plan"]
    pattern = "HikariCP|HikariPool|Connection is not available"
    assert steps[0] == f"调用 query_logs(service=inventory-service, pattern={pattern})"
    assert "query_logs: pool logs" in steps
    assert not any(step.startswith(("query_metrics", "lookup_knowledge")) for step in steps)  # not asked for
    assert "不放宽" in steps[-1]
    # the plan names the exact calls, which the LLM Executor's code runs first
    assert plan["tool_calls"] == [
        {"tool_name": "query_logs", "arguments": {"service": "inventory-service", "pattern": pattern}}
    ]


async def test_plan_without_entities_says_so() -> None:
    plan = (
        await OfflinePlanner(catalog=TEST_CATALOG).plan(
            "What is the weather today?", "en", SKILLS, Deadline.none()
        )
    ).data
    assert plan["selected_skill"] is None
    assert "no skill" in plan["selection_reason"]
    assert plan["plan"] == [
        "the question names no service, alert or log term: record the missing information, call no tool"
    ]
    assert plan["tool_calls"] == []
