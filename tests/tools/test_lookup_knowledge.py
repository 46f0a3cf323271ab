from __future__ import annotations

from pathlib import Path

import pytest

from evigate.server.deadline import Deadline
from evigate.server.sources.retrieval.ranking import RankingConfig
from evigate.server.tools import KnowledgeQuery, SessionToolBox, build_backend
from tests.tools.conftest import (
    Case,
    Harness,
    MemoryCases,
    MemoryRecorder,
    assert_refs_cover_items,
    make_harness,
)

CPU_ZH, CPU_EN = "knowledge/diagnose-high-cpu.zh.md", "knowledge/diagnose-high-cpu.en.md"
POOL_ZH, POOL_EN = (
    "knowledge/diagnose-mysql-connection-pool.zh.md",
    "knowledge/diagnose-mysql-connection-pool.en.md",
)

# (query, expected match_level, expected first source or None)
LABELLED = [
    # L0: a key term occurs exactly (alert name, exception class, error code, pool name, skill name)
    ("payment-service 现在有 HighCPUUsage 告警吗？", "L0", CPU_ZH),
    ("Is there a HighCPUUsage alert on payment-service?", "L0", CPU_EN),
    ("inventory-service 有 HikariCP 连接池耗尽的日志吗？", "L0", POOL_ZH),
    ("hikaricp pool exhausted", "L0", POOL_EN),
    ("HikariPool-1 - Connection is not available, request timed out after 30000ms", "L0", POOL_EN),
    ("java.sql.SQLTransientConnectionException 怎么处理", "L0", POOL_EN),
    ("user-service 出现 java.lang.OutOfMemoryError", "L0", "knowledge/diagnose-memory.zh.md"),
    ("gateway returns HTTP 502", "L0", "knowledge/diagnose-error-rate.en.md"),
    ("how do I use diagnose-error-rate", "L0", "knowledge/diagnose-error-rate.en.md"),
    ("pod in CrashLoopBackOff", "L0", "knowledge/diagnose-pod-restarts.en.md"),
    ("HighLatency on order-service", "L0", "knowledge/diagnose-high-latency.en.md"),
    # L1: no key term, but lexical similarity clears the threshold and the margin
    ("CPU 使用率很高怎么排查", "L1", CPU_ZH),
    ("GC 停顿导致 CPU 飙高", "L1", CPU_ZH),
    ("数据库连接池满了怎么办", "L1", POOL_ZH),
    ("接口响应很慢", "L1", "knowledge/diagnose-high-latency.zh.md"),
    ("错误率突然升高", "L1", "knowledge/diagnose-error-rate.zh.md"),
    ("redis 连接被重置", "L1", "knowledge/runbook-redis-connection.zh.md"),
    ("磁盘满了", "L1", "knowledge/runbook-disk-space.zh.md"),
    ("how to troubleshoot slow responses and high latency", "L1", "knowledge/diagnose-high-latency.en.md"),
    ("memory keeps growing until the container is killed", "L1", "knowledge/diagnose-memory.en.md"),
    ("pod keeps restarting after liveness probe failures", "L1", "knowledge/diagnose-pod-restarts.en.md"),
    ("kafka consumer lag growing", "L1", "knowledge/runbook-kafka-consumer-lag.en.md"),
    # none: unrelated, near-miss identifiers, or one coincidental word
    ("如何做红烧肉", "none", None),
    ("明天北京天气怎么样", "none", None),
    ("请帮我写一首诗", "none", None),
    ("今天股票行情", "none", None),
    ("what is the weather in Paris tomorrow", "none", None),
    ("quarterly revenue report", "none", None),
    ("Explain quantum entanglement", "none", None),
    ("what is the root cause?", "none", None),
    ("HighCPUUsageX alert", "none", None),
    ("HikariPool-10 stats", "none", None),
]


@pytest.mark.parametrize(("query", "level", "source"), LABELLED)
async def test_labelled_queries(demo: Harness, query: str, level: str, source: str | None) -> None:
    result = await demo.call("lookup_knowledge", query=query)
    assert result.status == "success"
    assert result.retrieval_details["match_level"] == level
    if level == "none":
        assert result.retrieval_details["evidence_status"] == "no_evidence"
        [ref] = result.retrieval_details["evidence_refs"]
        assert ref["raw_path"] == "$.no_evidence"
        assert ref["text"] == (
            f"lookup_knowledge returned no evidence; evidence_status=no_evidence; query={query}; "
            "match_level=none; retrieval=bm25; total=0; message=未找到匹配的知识"
        )
        return
    assert result.retrieval_details["evidence_status"] == "supported"
    assert result.raw_result is not None
    assert result.raw_result["evidence_blocks"][0]["source"] == source
    assert_refs_cover_items(result, "evidence_blocks")


def test_at_least_twenty_labels_in_both_languages() -> None:
    assert len(LABELLED) >= 20
    chinese = [q for q, _, _ in LABELLED if any("\u4e00" <= c <= "\u9fff" for c in q)]
    assert len(chinese) >= 8 and len(LABELLED) - len(chinese) >= 8
    assert {lvl for _, lvl, _ in LABELLED} == {"L0", "L1", "none"}


async def test_l0_block_names_the_matched_key(demo: Harness) -> None:
    result = await demo.call(
        "lookup_knowledge", query="payment-service 现在有 HighCPUUsage 告警吗？", limit=1
    )
    assert result.raw_result is not None
    [block] = result.raw_result["evidence_blocks"]
    assert (
        block["matched"] == "HighCPUUsage"
        and block["skill"] == "diagnose-high-cpu"
        and block["kind"] == "skill"
    )
    ref = result.retrieval_details["evidence_refs"][0]["text"]
    assert ref.startswith("[skill] HighCPUUsage 排查手册（CPU 使用率过高） / ")
    assert "source=knowledge/diagnose-high-cpu.zh.md; skill=diagnose-high-cpu; matched=HighCPUUsage" in ref


async def test_threshold_is_configurable() -> None:
    strict = make_harness(lexical=RankingConfig(mode="bm25", lexical_threshold=50.0))
    assert (await strict.call("lookup_knowledge", query="CPU 使用率很高怎么排查")).retrieval_details[
        "match_level"
    ] == "none"
    # L0 does not depend on the threshold.
    assert (await strict.call("lookup_knowledge", query="HighCPUUsage")).retrieval_details[
        "match_level"
    ] == "L0"


CASES = [
    Case(
        "c-1",
        "checkout 超时：OrderLockTimeoutException",
        "订单锁等待超时 OrderLockTimeoutException，库存扣减事务持有行锁过久。",
        "订单锁等待超时 OrderLockTimeoutException，库存扣减事务持有行锁过久。",
    ),
    Case(
        "c-2",
        "nightly report job slow",
        "The nightly settlement report job scans the ledger table",
        "add index",
    ),
]


async def test_case_library_is_searched() -> None:
    h = make_harness(cases=CASES)
    exact = await h.call("lookup_knowledge", query="OrderLockTimeoutException 是什么原因")
    assert exact.retrieval_details["match_level"] == "L0"
    assert exact.raw_result is not None
    [block] = exact.raw_result["evidence_blocks"]
    assert block == {
        "source": "case:c-1",
        "kind": "case",
        "title": "checkout 超时：OrderLockTimeoutException",
        "case_id": "c-1",
        "fault_category": "GENERAL",
        "text": "订单锁等待超时 OrderLockTimeoutException，库存扣减事务持有行锁过久。",
        "matched": "OrderLockTimeoutException",
        "match": "L0 dense=- bm25=5.02 evidence=5.018",
    }
    assert_refs_cover_items(exact, "evidence_blocks")
    similar = await h.call("lookup_knowledge", query="nightly settlement report is slow")
    assert similar.retrieval_details["match_level"] == "L1"
    assert similar.raw_result is not None and similar.raw_result["evidence_blocks"][0]["source"] == "case:c-2"


async def test_new_cases_are_seen_without_restart() -> None:
    cases = MemoryCases()
    backend = build_backend(None, cases)
    query = KnowledgeQuery("OrderLockTimeoutException", 5)
    assert (await backend.lookup_knowledge(query)).match_level == "none"
    cases.cases.append(CASES[0])
    assert (await backend.lookup_knowledge(query)).match_level == "L0"


async def test_case_library_down_fails_the_call() -> None:
    toolbox = SessionToolBox(build_backend(None, MemoryCases(fail=True)), MemoryRecorder(), "s")
    result = await toolbox.call("lookup_knowledge", {"query": "HighCPUUsage"}, Deadline.none())
    assert result.status == "failed" and "case library unavailable" in (result.error or "")
    assert result.retrieval_details["evidence_refs"] == []


async def test_corrupt_or_missing_knowledge_fails(data_dir: Path) -> None:
    (data_dir / "knowledge" / "bad.md").write_text("---\ntitle: [unclosed\n---\nbody\n", encoding="utf-8")
    h = make_harness(data_dir)
    corrupt = await h.call("lookup_knowledge", query="anything at all")
    assert corrupt.status == "failed" and "corrupt knowledge file: knowledge/bad.md" in (corrupt.error or "")
    (data_dir / "knowledge" / "bad.md").write_text("---\ntitle: t\nkeys: Foo\n---\nbody\n", encoding="utf-8")
    keys = await h.call("lookup_knowledge", query="anything else")
    assert keys.status == "failed" and "keys must be a list" in (keys.error or "")
    (data_dir / "knowledge" / "bad.md").unlink()
    (data_dir / "knowledge").rmdir()
    missing = await h.call("lookup_knowledge", query="a third thing")
    assert missing.status == "failed" and "knowledge data unavailable" in (missing.error or "")


async def test_documents_without_front_matter_and_long_sections(data_dir: Path) -> None:
    body = "# Heading\n" + "word " * 400 + "\n"
    (data_dir / "knowledge" / "plain.md").write_text(body, encoding="utf-8")
    h = make_harness(
        data_dir, lexical=RankingConfig(mode="bm25", lexical_threshold=0.1)
    )  # one document: every IDF is small
    result = await h.call("lookup_knowledge", query="plain word word heading")
    assert result.raw_result is not None
    [block] = result.raw_result["evidence_blocks"]
    assert block["title"] == "plain" and block["kind"] == "runbook" and block["section"] == "Heading"
    assert len(block["text"]) == 600 and block["text"].endswith("…")
