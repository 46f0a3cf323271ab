"""query_logs' relevance mode (BM25 over the templates of the service and window, identifiers kept
whole) and the exact modes' guards: a possessive is not part of a keyword, a level word is a filter."""

from __future__ import annotations

from pathlib import Path

from evigate.server.sources.logs.relevance import level_word, rank, terms
from tests.tools.conftest import make_harness, write_logs, write_world


def _world(tmp_path: Path) -> Path:
    root = write_world(tmp_path)
    rows = [
        ("WARN", "request to payment gateway timed out after 3000ms"),
        ("ERROR", "order_id=42 rejected: card declined"),
        ("INFO", "order 43 accepted"),
        ("ERROR", "java.lang.OutOfMemoryError: Java heap space"),
        ("INFO", "cache warmed with 1200 entries"),
        ("ERROR", "request to payment gateway timed out after 5000ms"),
    ]
    write_logs(
        root,
        "checkout.log",
        [
            {"time": f"2026-07-08T23:0{i}:00Z", "level": lv, "service": "checkout", "msg": m}
            for i, (lv, m) in enumerate(rows)
        ],
    )
    return root


async def _messages(tmp_path: Path, **args: str) -> list[str]:
    result = await make_harness(_world(tmp_path)).call("query_logs", service="checkout", since="1d", **args)
    assert result.raw_result is not None
    return [item["message"] for item in result.raw_result["logs"]]


async def test_another_word_order_finds_the_line_once_per_template(tmp_path: Path) -> None:
    found = await _messages(tmp_path, query="gateway payment timeout timed out")
    assert found[0] == "request to payment gateway timed out after 5000ms"  # the newest of its template
    assert "request to payment gateway timed out after 3000ms" not in found


async def test_an_identifier_is_one_term(tmp_path: Path) -> None:
    found = await _messages(tmp_path, query="which order_id was rejected")
    assert found[0] == "order_id=42 rejected: card declined"
    found = await _messages(tmp_path, query="OutOfMemoryError")
    assert found[0] == "java.lang.OutOfMemoryError: Java heap space"


async def test_a_level_word_in_the_query_is_a_filter(tmp_path: Path) -> None:
    found = await _messages(tmp_path, query="ERROR order")
    assert found == ["order_id=42 rejected: card declined"]


async def test_a_level_word_as_keyword_filters_by_level(tmp_path: Path) -> None:
    found = await _messages(tmp_path, keyword="ERROR", level="ERROR")
    assert len(found) == 3  # not "nothing found" for lack of the word ERROR in the messages


async def test_a_possessive_is_not_part_of_the_keyword(tmp_path: Path) -> None:
    found = await _messages(tmp_path, keyword="gateway's")
    assert len(found) == 2


def test_terms_keep_identifiers_whole_and_in_parts() -> None:
    got = terms("the gateway's java.sql.SQLException on order_id in OrderRouter")
    for term in ("gateway", "java.sql.sqlexception", "order_id", "orderrouter", "router", "order"):
        assert term in got
    assert "s" not in got


def test_level_word_only_in_capitals() -> None:
    assert level_word("ERROR lines of checkout") == ("ERROR", "lines of checkout")
    assert level_word("any error in checkout") == (None, "any error in checkout")


def test_rank_keeps_only_documents_with_a_reason() -> None:
    assert rank("disk full", ["cache warmed", "disk is full on /var"]).order == [1]
