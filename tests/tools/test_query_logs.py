from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.tools.conftest import Harness, assert_refs_cover_items, make_harness, write_logs

HIKARI = "HikariPool-1 - Connection is not available, request timed out after 30000ms"


def line(ts: str, level: str, service: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"timestamp": ts, "level": level, "service": service, "message": message, **extra}


async def test_inventory_service_has_no_hikaricp_lines(demo: Harness) -> None:
    result = await demo.call("query_logs", service="inventory-service", keyword="HikariCP")
    assert result.status == "success"
    assert result.retrieval_details["evidence_status"] == "no_evidence"
    assert result.retrieval_details["match_level"] == "none"
    [ref] = result.retrieval_details["evidence_refs"]
    assert ref["raw_path"] == "$.no_evidence"
    assert ref["text"] == (
        "query_logs returned no evidence; evidence_status=no_evidence; query=inventory-service HikariCP; "
        "service=inventory-service; keyword=HikariCP; total=0; message=未找到匹配的日志"
    )
    assert result.raw_result == {
        "no_evidence": {
            "tool": "query_logs",
            "query": "inventory-service HikariCP",
            "filters": {"service": "inventory-service", "keyword": "HikariCP"},
            "total": 0,
            "message": "未找到匹配的日志",
        }
    }
    # The seed's negative excerpt shares every token with the ref text.
    seed = "query_logs returned no evidence; query=inventory-service HikariCP; "
    seed += "total=0; evidence_status=no_evidence"
    assert all(part in ref["text"] for part in seed.split("; "))


async def test_order_service_pool_exhaustion_line(demo: Harness) -> None:
    result = await demo.call(
        "query_logs",
        service="order-service",
        keyword="Connection is not available",
        until="2026-07-08T23:05:28Z",
    )
    assert result.raw_result is not None
    first = result.retrieval_details["evidence_refs"][0]["text"]
    assert first.startswith(f"2026-07-08 23:05:28 ERROR order-service {HIKARI}")
    assert "exception=java.sql.SQLTransientConnectionException" in first
    assert_refs_cover_items(result, "logs")


async def test_keyword_is_case_insensitive_and_searches_extra_fields(demo: Harness) -> None:
    upper = await demo.call("query_logs", service="order-service", keyword="HIKARICP")
    lower = await demo.call("query_logs", service="order-service", keyword="hikaricp")
    assert upper.raw_result and lower.raw_result
    assert upper.raw_result["total"] == lower.raw_result["total"] > 0
    by_exception = await demo.call("query_logs", keyword="SQLTransientConnectionException", limit=1)
    assert by_exception.raw_result is not None
    assert by_exception.raw_result["logs"][0]["message"] == HIKARI


async def test_keyword_is_literal_and_pattern_is_a_regex(data_dir: Path) -> None:
    write_logs(
        data_dir,
        "app.ndjson",
        [
            line("2026-07-08T23:00:00Z", "ERROR", "a", "timed out after 30000ms"),
            line("2026-07-08T23:01:00Z", "ERROR", "a", "timed out after 500ms"),
            line("2026-07-08T23:02:00Z", "ERROR", "a", "literal \\d+ms in text"),
        ],
    )
    h = make_harness(data_dir)
    literal = await h.call("query_logs", keyword="\\d+ms")
    regex = await h.call("query_logs", pattern="after \\d{5}ms")
    assert literal.raw_result and regex.raw_result
    assert [x["message"] for x in literal.raw_result["logs"]] == ["literal \\d+ms in text"]
    assert [x["message"] for x in regex.raw_result["logs"]] == ["timed out after 30000ms"]
    both = await h.call("query_logs", keyword="timed out", pattern="\\b500ms")
    assert both.raw_result is not None and both.raw_result["total"] == 1


async def test_level_filter(demo: Harness) -> None:
    result = await demo.call("query_logs", service="user-service", level="ERROR")
    assert result.raw_result is not None
    assert [x["message"] for x in result.raw_result["logs"]] == [
        "java.lang.OutOfMemoryError: Java heap space"
    ]
    for level in ("DEBUG", "INFO", "WARN", "ERROR"):
        some = await demo.call("query_logs", level=level, limit=1)
        assert some.raw_result is not None and some.raw_result["total"] > 0, level


async def test_time_windows_absolute_and_relative(demo: Harness) -> None:
    before = await demo.call(
        "query_logs", service="order-service", keyword="HikariCP", until="2026-07-08T23:00:00Z"
    )
    assert before.retrieval_details["evidence_status"] == "no_evidence"
    assert "until=2026-07-08 23:00:00" in before.retrieval_details["evidence_refs"][0]["text"]
    recent = await demo.call("query_logs", service="gateway", level="ERROR", since="15m")
    assert recent.raw_result is not None and recent.raw_result["total"] > 0
    stamps = [x["timestamp"] for x in recent.raw_result["logs"]]
    assert all("2026-07-08 23:15:00" <= s <= "2026-07-08 23:30:00" for s in stamps)
    window = await demo.call(
        "query_logs", service="user-service", since="2026-07-08T21:38:12Z", until="2026-07-08T21:38:12Z"
    )
    assert window.raw_result is not None
    assert "java.lang.OutOfMemoryError: Java heap space" in [x["message"] for x in window.raw_result["logs"]]


async def test_limit_total_and_newest_first(demo: Harness) -> None:
    result = await demo.call("query_logs", service="order-service", keyword="HikariCP", limit=5)
    assert result.raw_result is not None
    logs = result.raw_result["logs"]
    assert len(logs) == 5 and result.raw_result["total"] > 5
    assert [x["timestamp"] for x in logs] == sorted((x["timestamp"] for x in logs), reverse=True)
    everything = await demo.call("query_logs", service="order-service", keyword="HikariCP", limit=200)
    assert everything.raw_result is not None
    assert everything.raw_result["total"] == result.raw_result["total"] == len(everything.raw_result["logs"])
    assert everything.raw_result["logs"][:5] == logs
    assert_refs_cover_items(everything, "logs")


async def test_chinese_keywords(demo: Harness) -> None:
    result = await demo.call("query_logs", service="payment-service", keyword="支付回调处理超时")
    assert result.raw_result is not None and result.raw_result["total"] > 0
    assert all("支付回调处理超时" in x["message"] for x in result.raw_result["logs"])
    assert "支付回调处理超时" in result.retrieval_details["evidence_refs"][0]["text"]
    none = await demo.call("query_logs", service="inventory-service", keyword="连接池耗尽")
    assert none.retrieval_details["evidence_status"] == "no_evidence"
    assert "query=inventory-service 连接池耗尽" in none.retrieval_details["evidence_refs"][0]["text"]


async def test_chinese_keyword_in_an_ascii_escaped_file(data_dir: Path) -> None:
    write_logs(
        data_dir, "x.ndjson", [line("2026-07-08T23:00:00Z", "WARN", "a", "库存不足 sku=1")], ensure_ascii=True
    )
    h = make_harness(data_dir)
    result = await h.call("query_logs", keyword="库存不足")
    assert result.raw_result is not None and result.raw_result["total"] == 1


async def test_a_service_without_logs_could_not_be_checked(demo: Harness) -> None:
    result = await demo.call("query_logs", service="billing-service")
    assert result.status == "failed" and result.raw_result is None
    assert result.error is not None and result.error.startswith("no logs of billing-service are available")


async def test_a_corrupt_line_is_skipped_and_reported_not_failed(data_dir: Path) -> None:
    path = write_logs(data_dir, "a.ndjson", [line("2026-07-08T23:00:00Z", "INFO", "a", "ok")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"timestamp": "2026-07-08T23:01:00Z", "level": "INFO"\n')
    h = make_harness(data_dir)
    other = await h.call("query_logs", service="a", keyword="HikariCP")
    assert (other.status, other.retrieval_details["evidence_status"]) == ("success", "no_evidence")
    found = await h.call("query_logs", service="a")
    assert found.raw_result is not None
    assert [x["message"] for x in found.raw_result["logs"]] == ["ok"]
    assert found.raw_result["skipped_lines"] == 1
    assert found.raw_result["skipped_at"] == ["a.ndjson:2 (not json)"]
    assert found.raw_result["parsers"] == {"a.ndjson": "json"}
    # An answer about a part of the data that could not be read says so.
    missing = await h.call("query_logs", service="a", keyword="nothing like this")
    assert "skipped_lines=1" in missing.retrieval_details["evidence_refs"][0]["text"]


async def test_nothing_readable_fails(data_dir: Path) -> None:
    (data_dir / "logs" / "b.ndjson").write_bytes(
        b'{"timestamp": "x", "level": "INFO", "service": "a", "message": "m"}\n'
    )
    h = make_harness(data_dir)
    bad_time = await h.call("query_logs", service="a")
    assert bad_time.status == "failed" and "b.ndjson:1 (no timestamp)" in (bad_time.error or "")
    (data_dir / "logs" / "b.ndjson").write_bytes(b"\xff\xfe garbage\n")
    bad_bytes = await h.call("query_logs", service="a")
    assert bad_bytes.status == "failed" and "b.ndjson:1 (not UTF-8)" in (bad_bytes.error or "")
    assert bad_bytes.retrieval_details["evidence_refs"] == []
    assert h.recorder.rows[-1]["status"] == "failed"


async def test_missing_log_data_fails(data_dir: Path) -> None:
    h = make_harness(data_dir)
    empty = await h.call("query_logs", service="a")
    assert empty.status == "failed" and "no log files under" in (empty.error or "")
    (data_dir / "logs").rmdir()
    missing = await h.call("query_logs", service="a", keyword="y")
    assert missing.status == "failed" and "log data unavailable" in (missing.error or "")
    assert missing.retrieval_details == {
        "evidence_status": "failed",
        "match_level": "none",
        "evidence_refs": [],
    }


async def test_changed_file_is_reindexed(data_dir: Path) -> None:
    path = write_logs(data_dir, "a.ndjson", [line("2026-07-08T23:00:00Z", "INFO", "a", "first")])
    h = make_harness(data_dir)
    assert (await h.call("query_logs", keyword="second")).retrieval_details[
        "evidence_status"
    ] == "no_evidence"
    write_logs(data_dir, "a.ndjson", [line("2026-07-08T23:00:00Z", "INFO", "a", "first second")])
    os.utime(path, ns=(1, 1))
    again = await h.call("query_logs", keyword="second", limit=10)
    assert again.retrieval_details["evidence_status"] == "supported"


async def test_extra_fields_are_kept_and_shown(data_dir: Path) -> None:
    write_logs(
        data_dir,
        "a.ndjson",
        [line("2026-07-08T23:00:00.250+08:00", "warn", "a", "m", pod="a-1", attempt=3, tags={"k": "v"})],
    )
    h = make_harness(data_dir)
    result = await h.call("query_logs", service="A")
    assert result.raw_result is not None
    [item] = result.raw_result["logs"]
    assert item == {
        "timestamp": "2026-07-08 15:00:00.250",
        "level": "WARN",
        "service": "a",
        "message": "m",
        "pod": "a-1",
        "attempt": "3",  # extra fields are text, whatever format they were read from
        "tags": '{"k":"v"}',
    }
    assert result.retrieval_details["evidence_refs"][0]["text"] == (
        '2026-07-08 15:00:00.250 WARN a m | pod=a-1; attempt=3; tags={"k":"v"}'
    )
    assert_refs_cover_items(result, "logs")


async def test_level_aliases_in_files_and_windows_outside_a_file(data_dir: Path) -> None:
    write_logs(
        data_dir,
        "a.ndjson",
        [
            line("2026-07-08T22:00:00Z", "warning", "a", "disk 91%"),
            line("2026-07-08T22:10:00Z", "INFO", "a", "ok"),
        ],
    )
    write_logs(data_dir, "b.ndjson", [line("2026-07-08T23:10:00Z", "WARN", "a", "disk 95%")])
    h = make_harness(data_dir)
    warn = await h.call("query_logs", service="a", level="WARN")
    assert warn.raw_result is not None
    assert [x["message"] for x in warn.raw_result["logs"]] == ["disk 95%", "disk 91%"]
    late = await h.call("query_logs", service="a", keyword="disk", since="30m")
    assert late.raw_result is not None and [x["message"] for x in late.raw_result["logs"]] == ["disk 95%"]
    early = await h.call("query_logs", service="a", until="2026-07-08T21:00:00Z")
    assert early.retrieval_details["evidence_status"] == "no_evidence"


async def test_queries_without_text_filters_use_the_index_sorted_or_not(data_dir: Path) -> None:
    minutes = [5, 1, 9, 3, 7, 7, 2]  # out of order, with a tie
    write_logs(
        data_dir,
        "u.ndjson",
        [line(f"2026-07-08T23:0{m}:00Z", "INFO", "a", f"m{i}") for i, m in enumerate(minutes)],
    )
    write_logs(
        data_dir, "s.ndjson", [line(f"2026-07-08T22:0{m}:00Z", "INFO", "b", f"s{m}") for m in range(10)]
    )
    h = make_harness(data_dir)
    unsorted = await h.call("query_logs", service="a", limit=3, since="2026-07-08T23:02:00Z")
    assert unsorted.raw_result is not None
    # Newest first; on equal timestamps the later line first.
    assert [x["message"] for x in unsorted.raw_result["logs"]] == ["m2", "m5", "m4"]
    assert unsorted.raw_result["total"] == 6
    ordered = await h.call(
        "query_logs", service="b", since="2026-07-08T22:03:00Z", until="2026-07-08T22:06:00Z"
    )
    assert ordered.raw_result is not None
    assert [x["message"] for x in ordered.raw_result["logs"]] == ["s6", "s5", "s4", "s3"]
    both = await h.call("query_logs", level="INFO", limit=2)
    assert both.raw_result is not None and both.raw_result["total"] == 17
    assert [x["message"] for x in both.raw_result["logs"]] == ["m2", "m5"]
    assert_refs_cover_items(both, "logs")
