"""Where a cited excerpt sits in its ref text, and which claims an answer sentence states: the
leniency the Gatekeeper allows (case, whitespace, punctuation, an ellipsis), in English and Chinese."""

from __future__ import annotations

from evigate.server.web.highlight import Segment, excerpt_spans, segments

REF_EN = (
    "2026-07-08 23:05:12 ERROR order-service HikariPool-1 - Connection is not available, request timed out"
)
REF_ZH = (
    "2026-07-08 21:38:12 ERROR user-service 内存不足，堆空间耗尽；java.lang.OutOfMemoryError: Java heap space"
)


def _marked(text: str, excerpts: list[str]) -> list[str]:
    return [s.text for s in segments(text, excerpts) if s.marked]


def test_an_excerpt_is_found_regardless_of_case_spacing_and_punctuation() -> None:
    assert _marked(REF_EN, ["hikaripool-1  connection is NOT available"]) == [
        "HikariPool-1 - Connection is not available"
    ]
    assert _marked(REF_ZH, ["内存不足,堆空间耗尽"]) == ["内存不足，堆空间耗尽"]


def test_ellipsis_parts_are_marked_in_order_and_a_missing_part_marks_nothing() -> None:
    assert _marked(REF_EN, ["ERROR order-service … request timed out"]) == [
        "ERROR order-service",
        "request timed out",
    ]
    assert _marked(REF_ZH, ["user-service...Java heap space"]) == ["user-service", "Java heap space"]
    assert _marked(REF_EN, ["request timed out … ERROR"]) == []  # out of order
    assert excerpt_spans(REF_EN, "connection pool exhausted") == []


def test_segments_keep_every_character_once() -> None:
    parts = segments(REF_EN, ["Connection is not available", "not available, request"])
    assert "".join(p.text for p in parts) == REF_EN
    assert [p.text for p in parts if p.marked] == ["Connection is not available, request"]  # overlaps merged
    assert segments("", []) == [Segment("", False)]
