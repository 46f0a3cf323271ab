"""A realistic session shared by the rules tests: its invocations and valid bindings."""

from __future__ import annotations

from typing import Any

from evigate.rules.types import EvidenceRef, InvocationFacts

ALERT_CPU = (
    "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=critical, "
    "instance=pay-01.prod.internal, threshold=85%"
)
ALERT_MEM = (
    "HighMemoryUsage, service=payment-service, state=resolved, current=71%, duration=5m, severity=warning, "
    "instance=pay-02.prod.internal, threshold=80%"
)
LOG_HIKARI = (
    "2026-07-08 23:05:28 ERROR order-service HikariPool-1 - Connection is not available, "
    "request timed out after 30000ms"
)
LOG_HTTP = (
    "2026-07-08 23:06:02 WARN order-service ERR_1042 upstream inventory-service answered HTTP 503 in 1200ms"
)
NO_EVIDENCE_HIKARI = (
    "query_logs returned no evidence; evidence_status=no_evidence; query=inventory-service HikariCP; "
    "topic=application-logs; total=0; message=未找到匹配的日志"
)
KNOWLEDGE = (
    "知识库：HikariCP 连接池耗尽时日志出现 Connection is not available，常见原因是慢查询长期占用连接，"
    "建议检查 maximumPoolSize=20 与慢 SQL。"
)

INVOCATIONS: tuple[InvocationFacts, ...] = (
    InvocationFacts(
        517, "query_metrics", (EvidenceRef("$.alerts[0]", ALERT_CPU), EvidenceRef("$.alerts[1]", ALERT_MEM))
    ),
    InvocationFacts(
        518, "query_logs", (EvidenceRef("$.logs[0]", LOG_HIKARI), EvidenceRef("$.logs[1]", LOG_HTTP))
    ),
    InvocationFacts(519, "query_logs", (EvidenceRef("$.no_evidence", NO_EVIDENCE_HIKARI),)),
    InvocationFacts(520, "lookup_knowledge", (EvidenceRef("$.evidence_blocks[0]", KNOWLEDGE),)),
    InvocationFacts(521, "query_metrics", None),  # stored before evidence_refs existed
)

CPU_EXCERPT = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m"
NEG_EXCERPT = (
    "query_logs returned no evidence; query=inventory-service HikariCP; total=0; evidence_status=no_evidence"
)


def binding(tool: Any, inv_id: Any, path: Any, excerpt: Any) -> dict[str, Any]:
    return {
        "source_type": "tool_trace",
        "source_id": "",
        "tool_name": tool,
        "source_invocation_id": inv_id,
        "raw_path": path,
        "evidence_excerpt": excerpt,
    }


def claim(claim_id: str, claim_type: str, *bindings: dict[str, Any], text: str = "") -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text or f"{claim_id} text",
        "support_level": "direct",
        "evidence_bindings": list(bindings),
    }


def output(*claims: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "answer_version": "executor_evidence_v2",
        "claims": list(claims),
        "hypotheses": [],
        "recommended_actions": [],
        "missing_info": [],
        **extra,
    }


def cpu_binding(**changes: Any) -> dict[str, Any]:
    return {**binding("query_metrics", 517, "$.alerts[0]", CPU_EXCERPT), **changes}


def neg_binding(**changes: Any) -> dict[str, Any]:
    return {**binding("query_logs", 519, "$.no_evidence", NEG_EXCERPT), **changes}
