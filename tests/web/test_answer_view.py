"""The answer as the session page groups it: steps one numbered list, the items after a list header
a bulleted list, every id a link (executor claims, failed calls, the final round for the rest)."""

from __future__ import annotations

from typing import Any

from evigate.server.web.answer import ClaimLink, blocks, claim_link, sentence_views


def _s(kind: str, text: str, *ids: str, fixed: str = "") -> dict[str, Any]:
    return {"kind": kind, "text": text, "claim_ids": list(ids), "hypothesis_ids": [], "fixed_line": fixed}


def test_sentences_are_grouped_as_the_text_joins_them() -> None:
    links = {"claim-1": claim_link("claim-1", "r1-c0", [("#3 $.alerts[0]", "#ref-3-0", "state=firing")])}
    raw = [
        _s("headline", "HighErrorRate is firing.", "claim-1"),
        _s("note", "Steps (from the runbook):", fixed="steps_header"),
        _s("step", "Check the pool.", "claim-1"),
        _s("step", "Check the database.", "claim-1"),
        _s("note", "Could not be checked:", fixed="could_not_check_header"),
        _s("could_not_check", "The log query failed.", "call-7"),
        _s("could_not_check", "The runbook lacks a section.", "missing-1"),
        _s("finding", "Nothing bound."),
    ]
    views = sentence_views(raw, links, "round-2")
    assert [(b.kind, len(b.sentences)) for b in blocks(views)] == [
        ("lines", 1),
        ("header", 1),
        ("steps", 2),
        ("header", 1),
        ("items", 3),
    ]
    assert views[0].claims == [
        ClaimLink("claim-1", "#r1-c0", (("#3 $.alerts[0]", "#ref-3-0"),), ("state=firing",))
    ]
    assert views[0].citations == [("#3 $.alerts[0]", "#ref-3-0")] and views[0].excerpts == ["state=firing"]
    assert views[5].claims == [ClaimLink("call-7", "#call-7")]
    assert views[6].claims == [ClaimLink("missing-1", "#round-2")]
    assert [v.unbound for v in views] == [False] * 7 + [True]


def test_what_is_not_a_sentence_is_left_out() -> None:
    assert sentence_views(None, {}, "") == []
    assert sentence_views(["text", 3, _s("finding", "x", "claim-9")], {}, "") == sentence_views(
        [_s("finding", "x", "claim-9")], {}, ""
    )
