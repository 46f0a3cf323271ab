"""The code check under the Verifier: a claim's critical facts must occur in its verified excerpts."""

from __future__ import annotations

import pytest

from evigate.server.pipeline.derivation import JSON, check_claims, underived_facts

EXCERPT = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m"


def _claim(text: str, excerpt: str = EXCERPT, claim_id: str = "claim-1") -> JSON:
    return {"claim_id": claim_id, "claim_text": text, "evidence_bindings": [{"evidence_excerpt": excerpt}]}


def _gate(status: str = "pass", claim_id: str = "claim-1") -> JSON:
    return {"checked_bindings": [{"claim_id": claim_id, "binding_index": 0, "status": status}]}


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。", []),
        ("payment-service has a firing HighCPUUsage alert (current=92%, duration=25m).", []),
        ("payment-service 的 CPU 持续 25 分钟超过阈值", []),
        ("payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 95%。", ["95%"]),
        ("payment-service CPU at 9.2%", ["9.2%"]),
        ("payment-service CPU at 2%", ["2%"]),
        ("order-service has a HighCPUUsage alert", ["order-service"]),
        ("HighCPUUsage fired with error code ERR-1042", ["ERR-1042"]),
    ],
)
def test_underived_facts(text: str, missing: list[str]) -> None:
    assert underived_facts(_claim(text), _gate()) == missing


def test_only_verified_excerpts_count() -> None:
    claim = _claim("payment-service CPU 92%")
    assert underived_facts(claim, _gate(status="fail")) == ["payment-service", "CPU", "92%"]
    assert underived_facts(claim, {"checked_bindings": []}) == ["payment-service", "CPU", "92%"]


def test_check_claims_names_each_claim() -> None:
    claims = [_claim("CPU 92%"), _claim("CPU 95%", claim_id="claim-2")]
    gate = {
        "checked_bindings": [*_gate()["checked_bindings"], *_gate(claim_id="claim-2")["checked_bindings"]]
    }
    assert check_claims(claims, gate) == {"claim-2": ["95%"]}
    assert check_claims([{"claim_id": "x", "claim_text": None}], gate) == {}


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("当前查询未检索到 inventory-service 的 HikariCP 日志。", False),
        ("This query found no matching evidence of HikariCP logs for inventory-service.", False),
        ("inventory-service 的 HikariCP 连接池问题不存在。", True),
        ("HikariCP pool exhaustion is ruled out for inventory-service.", True),
    ],
)
def test_overstating_claim_texts_are_flagged(text: str, flagged: bool) -> None:
    excerpt = "query_logs returned no evidence; evidence_status=no_evidence; query=inventory-service HikariCP"
    claim = {**_claim(text, excerpt), "claim_type": "negative_observation"}
    found = check_claims([claim], _gate())
    assert bool(found) == flagged
    if flagged:
        assert all(fact.startswith("over-statement: ") for fact in found["claim-1"])


@pytest.mark.parametrize(
    ("text", "excerpt", "flagged"),
    [
        ("<service> 的 HighCPUUsage 告警正在触发。", EXCERPT, ["placeholder: <service>"]),
        (
            "<what the cited ref text says, in the task's language>",
            EXCERPT,
            ["placeholder: <what the cited ref text says, in the task's language>"],
        ),
        ("payment-service has {{value}} CPU", EXCERPT, ["placeholder: {{value}}"]),
        ("payment-service HighCPUUsage is firing (TODO: add duration)", EXCERPT, ["placeholder: todo"]),
        # a placeholder-shaped token of the data itself is data
        ("order-service threw at Pool.<init>", "IllegalStateException at Pool.<init>(Pool.java:40)", []),
        ("payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。", EXCERPT, []),
    ],
)
def test_a_copied_template_placeholder_is_no_claim(text: str, excerpt: str, flagged: list[str]) -> None:
    found = check_claims([_claim(text, excerpt)], _gate()).get("claim-1", [])
    assert [f for f in found if f.startswith("placeholder")] == flagged
