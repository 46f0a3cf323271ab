"""summarize_logs through the toolbox: ranked templates, citable refs checked by the Gatekeeper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evigate.rules import gatekeeper
from evigate.rules.types import InvocationFacts
from evigate.server.sources.logs.events import LogEvent
from evigate.server.sources.logs.items import pattern_item
from evigate.server.sources.logs.patterns import pattern_ref_text, summarize
from evigate.server.tools.registry import default_registry
from evigate.server.tools.summarize_logs import pattern_text
from tests.rules.session import binding, claim, output
from tests.tools.conftest import Harness, assert_refs_cover_items, make_harness

HIKARI_TEMPLATE = "HikariPool-<*> - Connection is not available, request timed out after <*>"


def _facts(h: Harness) -> list[InvocationFacts]:
    return [
        InvocationFacts.from_seed(i, row["tool_name"], row["retrieval_details"])
        for i, row in enumerate(h.recorder.rows, start=1)
    ]


async def test_patterns_are_ranked_with_count_span_levels_and_an_example(demo: Harness) -> None:
    result = await demo.call("summarize_logs", service="order-service", level="WARN", since="2h")
    assert result.raw_result is not None
    patterns = result.raw_result["patterns"]
    counts = [p["count"] for p in patterns]
    assert counts == sorted(counts, reverse=True)
    top = patterns[0]
    assert top["template"] == HIKARI_TEMPLATE and top["levels"] == ["ERROR"]
    # Every count is a real one: the same question through query_logs agrees.
    lines = await demo.call(
        "query_logs", service="order-service", keyword="Connection is not available", since="2h", limit=1
    )
    assert lines.raw_result is not None and lines.raw_result["total"] == top["count"]
    assert top["last"] == lines.raw_result["logs"][0]["timestamp"]
    # level is the lowest severity kept: no INFO or DEBUG template.
    assert {lv for p in patterns for lv in p["levels"]} <= {"WARN", "ERROR", "FATAL"}
    assert result.raw_result["total"] == len(patterns)  # all of them fit in the default limit
    assert result.raw_result["events"] == result.raw_result["mined"] == sum(counts)
    assert result.raw_result["skipped_lines"] == 0
    assert result.raw_result["parsers"] == {"order-service.ndjson": "json"}
    assert_refs_cover_items(result, "patterns")


async def test_a_count_and_time_span_claim_passes_the_gatekeeper(demo: Harness) -> None:
    result = await demo.call("summarize_logs", service="order-service", level="ERROR")
    assert result.raw_result is not None
    top = result.raw_result["patterns"][0]
    ref = result.retrieval_details["evidence_refs"][0]["text"]
    excerpt = f"Connection is not available … count={top['count']} first={top['first']} last={top['last']}"
    # The claim says the minutes; the excerpt quotes the ref's own words.
    since, until = top["first"][11:16], top["last"][11:16]
    text = f"`Connection is not available` appeared {top['count']} times between {since} and {until}"
    catalog = default_registry().catalog()

    def check(excerpt: str, claim_type: str = "observation") -> Any:
        cited = binding("summarize_logs", 1, "$.patterns[0]", excerpt)
        return gatekeeper.check(output(claim("c1", claim_type, cited, text=text)), _facts(demo), catalog)

    passed = check(excerpt)
    assert (passed.status, passed.severity) == ("pass", "none"), (passed.failed_rules, ref)
    forged = check(excerpt.replace(f"count={top['count']}", f"count={top['count'] + 1}"))
    assert forged.status != "pass"
    # A template's count says what was seen, not why: a root cause cites the events themselves.
    assert "citation.raw_path_grammar" in check(excerpt, "root_cause").failed_rules


async def test_nothing_matching_is_no_evidence_and_chinese_templates_keep_their_words(data_dir: Path) -> None:
    logs = data_dir / "logs" / "pay.log"
    logs.write_text(
        "".join(
            f"2026-07-08 23:{m:02d}:00,000 WARN [main] c.s.Pay - 支付回调处理超时 orderId=O{m}77 耗时{m}ms\n"
            for m in range(10)
        )
        + "\x00\x01 binary\n",
        encoding="utf-8",
    )
    h = make_harness(data_dir)
    result = await h.call("summarize_logs", service="pay")
    assert result.raw_result is not None
    (pattern,) = result.raw_result["patterns"]
    assert pattern["count"] == 10 and "支付回调处理超时" in pattern["template"]
    assert result.raw_result["skipped_lines"] == 1
    assert result.raw_result["skipped_at"] == ["pay.log:11 (binary)"]
    none = await h.call("summarize_logs", service="pay", level="ERROR")
    assert none.retrieval_details["evidence_status"] == "no_evidence"
    assert "skipped_lines=1" in none.retrieval_details["evidence_refs"][0]["text"]


def test_the_tool_text_is_the_readers_pattern_text() -> None:
    from datetime import UTC, datetime

    events = [
        LogEvent(datetime(2026, 7, 8, 23, i, tzinfo=UTC), "ERROR", "a", f'took {i}ms "quoted"  twice')
        for i in range(3)
    ]
    (pattern,) = summarize(events)
    assert pattern_text(pattern_item(pattern)) == pattern_ref_text(pattern)
