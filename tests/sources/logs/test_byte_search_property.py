"""Invariant: searching a keyword as bytes before parsing never loses an event that contains it,
whatever the writer escaped (JSON's \\uXXXX, quotes, backslashes; logfmt's quoting)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.server.sources.logs import LogConfig, LogReader, LogSearch

TEXT = st.text(
    alphabet=st.sampled_from([*list("abcXYZ 019=:/\"\\<>&'库存失败é-_."), "\t"]), min_size=1, max_size=24
)


def _logfmt_value(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


@settings(max_examples=60, deadline=None)
@given(
    messages=st.lists(TEXT, min_size=1, max_size=6),
    ascii_only=st.booleans(),
    pick=st.integers(min_value=0),
    cut=st.tuples(st.integers(min_value=0), st.integers(min_value=1)),
)
def test_a_keyword_taken_from_a_message_is_always_found(
    messages: list[str], ascii_only: bool, pick: int, cut: tuple[int, int]
) -> None:
    message = messages[pick % len(messages)]
    start = cut[0] % len(message)
    keyword = message[start : start + 1 + cut[1] % len(message)]
    if not keyword.strip():
        return  # whitespace alone is no keyword
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        json_lines = [
            json.dumps(
                {"time": f"2026-07-08T23:00:{i:02d}Z", "level": "info", "msg": m}, ensure_ascii=ascii_only
            )
            for i, m in enumerate(messages)
        ]
        (root / "a.log").write_text("\n".join(json_lines) + "\n", encoding="utf-8")
        kv = [
            f"time=2026-07-08T23:00:{i:02d}Z level=info msg={_logfmt_value(m)}"
            for i, m in enumerate(messages)
        ]
        (root / "b.log").write_text("\n".join(kv) + "\n", encoding="utf-8")
        result = LogReader(LogConfig(root=root)).search(LogSearch(keyword=keyword, limit=100))
        expected = sum(keyword.casefold() in m.casefold() for m in messages)
        assert result.total == 2 * expected
        assert result.skipped.count == 0
