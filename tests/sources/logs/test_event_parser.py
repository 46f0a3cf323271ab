"""Invariant: a single event read out of a file's bytes (what a query through the index and the
scan parse for every event holding a keyword) is the first event StreamParser drafts from the same
bytes: the same first line, time, parse, continuation lines and end, whatever lines come first or
after (blank, CRLF, not UTF-8, stack frames, Python tracebacks, lines of no format, an overlong
line, no final newline)."""

from __future__ import annotations

import io
import json
from datetime import UTC
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.server.sources.logs import LogConfig
from evigate.server.sources.logs.event_parser import EventParser
from evigate.server.sources.logs.jsonlines import JsonLines
from evigate.server.sources.logs.layouts import LogSource
from evigate.server.sources.logs.log_config import FieldNames
from evigate.server.sources.logs.logfmt import Logfmt
from evigate.server.sources.logs.reader import MAX_LINE, Draft, FileFormat, StreamParser, raw_lines
from evigate.server.sources.logs.textlines import MixedLines, RegexFormat

from .readerkit import LOGBACK

STAMP = "2026-07-08T14:00:01.123+00:00"
JSON_LINES = [
    json.dumps({"@timestamp": STAMP, "level": "ERROR", "message": "HikariPool-1 - timeout", "n": 1}),
    json.dumps(
        {"@timestamp": STAMP, "level": "info", "msg": "库存 ok", "service": "stock"}, ensure_ascii=False
    ),
    json.dumps({"level": "info", "msg": "no time"}),
    '{"@timestamp": "' + STAMP + '", "broken": ',
]
LOGFMT_LINES = [f'time={STAMP} level=warn msg="slow query" took=2.5s', "level=info msg=untimed"]
TEXT_LINES = [
    "2026-07-08 14:00:01.123 ERROR [main] a.B - HikariPool-1 - Connection is not available",
    "2026-07-08 14:00:02.456 INFO  [exec-1] a.B - 用户登录成功",
    "not a record at all",
]
COMMON = [
    "",
    "   ",
    "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available",
    "\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)",
    "Caused by: java.net.SocketTimeoutException: connect timed out",
    "\t... 42 common frames omitted",
    "Traceback (most recent call last):",
    '  File "app.py", line 3, in <module>',
    "KeyError: 'sku'",
    "Timeout: upstream",
]
RAW = [b"\xff\xfe not utf-8", b"bell \x07 line", b"x" * MAX_LINE]
SOURCE = LogSource("api", (), "api")


def _formats() -> dict[str, tuple[FileFormat, list[str]]]:
    text = MixedLines(RegexFormat(LOGBACK, UTC), JsonLines(FieldNames(), UTC))
    return {
        "json": (FileFormat("", JsonLines(FieldNames(), UTC)), JSON_LINES),
        "logfmt": (FileFormat("", Logfmt(FieldNames(), UTC)), LOGFMT_LINES),
        "text": (FileFormat("", text), TEXT_LINES),
    }


def _reference(file_format: FileFormat, data: bytes, line: int, offset: int) -> Draft | None:
    parser = StreamParser("api.log", file_format)
    for item in parser.run(raw_lines(io.BytesIO(data), line, offset)):
        if isinstance(item, Draft):
            return item
    return None


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["json", "logfmt", "text"]),
    st.data(),
    st.sampled_from([b"\n", b"\r\n"]),
    st.booleans(),
)
def test_a_single_event_is_the_first_stream_parser_draws(
    kind: str, data: st.DataObject, newline: bytes, ends_in_newline: bool
) -> None:
    file_format, own = _formats()[kind]
    lines = data.draw(
        st.lists(
            st.one_of(st.sampled_from([*own, *COMMON]).map(str.encode), st.sampled_from(RAW)), max_size=8
        )
    )
    body = newline.join(lines) + (newline if ends_in_newline and lines else b"")
    parser = EventParser(SOURCE, "api.log", file_format, LogConfig(root=Path("/nonexistent")))
    assert parser.draft(body, 7, 1000) == _reference(file_format, body, 7, 1000)
    # twice: the texts the format reads as nothing are remembered between events
    assert parser.draft(body, 7, 1000) == _reference(file_format, body, 7, 1000)
