"""Invariant: a lane reads a line only as the format's quick() reads it (time, level, service and
whether the message is composed), whatever the line: escapes, Unicode spaces and digits,
duplicate keys, nested values, empty values, junk around the record. A line no lane reads is left
to the one-line path, which is always allowed. And the timestamps of many lines come out as the
one-by-one Stamps gives them."""

from __future__ import annotations

import json
import re
from datetime import UTC, timedelta, timezone
from zoneinfo import ZoneInfo

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.server.sources.logs.jsonlines import JsonLines
from evigate.server.sources.logs.lanes import Lanes, Reads
from evigate.server.sources.logs.log_config import FieldNames
from evigate.server.sources.logs.logfmt import Logfmt
from evigate.server.sources.logs.stamps import Stamps
from evigate.server.sources.logs.textlines import RegexFormat

from .readerkit import LOGBACK, PYTHON

# Characters that have tripped parsers: quotes, backslashes, `=`, Unicode spaces and digits, CJK.
CHARS = st.sampled_from([*"aZ09 =:-_.,/{}[]\"\\'", "\u00a0", "\u2003", "\u0663", "库", "é", "\u200b"])
TEXT = st.text(CHARS, max_size=12)
STAMP = st.sampled_from(
    ["2026-07-08T14:00:01.123+00:00", "2026-07-08T14:00:01.123Z", "2026-07-08 14:00:01,123", "",
     "2026-07-08T14:00:61.000Z", "1751983201", "not a time", "2026-07-08T14:00:01.123+08:00"]
)  # fmt: skip
LEVEL = st.sampled_from(["INFO", "warn", "Error", "", "30", "notice", "[ERROR]"])
KEYS = st.sampled_from(["@timestamp", "time", "ts", "level", "lvl", "msg", "message", "service",
                        "app", "log.level", "service.name", "n", "user", "level ", "é"])  # fmt: skip
SCALAR = st.one_of(STAMP, LEVEL, TEXT, st.integers(-(10**20), 10**20), st.floats(allow_nan=True),
                   st.booleans(), st.none())  # fmt: skip
VALUE = st.one_of(SCALAR, st.dictionaries(st.sampled_from(["name", "app"]), SCALAR, max_size=2),
                  st.lists(SCALAR, max_size=2))  # fmt: skip
JUNK = st.sampled_from(["", "", "", " ", "  ", "x", "}", ",", "\u00a0"])


def _clean(line: str) -> bool:
    return not re.search(r"[\x00-\x1f\x7f]", line)


def _agree(line_format: object, lines: list[str]) -> int:
    """Every line a lane reads, it reads as quick() does; how many it read."""
    lines = [line for line in lines if _clean(line)]
    if not lines:
        return 0
    lanes = Lanes(line_format)
    lanes.learn(lines)
    if lanes.over_bytes:  # our lanes read the bytes: each line they read, they read as quick() does
        body = "\n".join(lines).encode() + b"\n"
        _agree_with(
            line_format,
            lines,
            lanes.read_bytes(body, np.flatnonzero(np.frombuffer(body, np.uint8) == 10) + 1),
        )
    return _agree_with(line_format, lines, lanes.read("\n".join(lines) + "\n", len(lines)))


def _agree_with(line_format: object, lines: list[str], reads: Reads | None) -> int:
    if reads is None:
        return 0  # the chunk is read line by line
    quick = line_format.quick  # type: ignore[attr-defined]
    for i, line in enumerate(lines):
        if not reads.times[i]:
            continue
        found = quick(line)
        assert found is not None, line
        assert found[0] == reads.times[i], line
        assert (found[1] or "", found[2] or "") == (reads.levels[i], reads.services[i]), line
        assert found[3] == bool(reads.composed[i]), line
    return sum(1 for t in reads.times if t)


def test_the_commonest_lines_are_read_by_lanes() -> None:
    stamp = "2026-07-08T14:00:01.123+00:00"
    records = [
        {"@timestamp": stamp, "level": "INFO", "service": "api", "msg": f'done {i} "ok" 库'} for i in range(5)
    ]
    assert (
        _agree(JsonLines(FieldNames(), UTC).light(), [json.dumps(r, ensure_ascii=False) for r in records])
        == 5
    )
    nginx = [json.dumps({"time": stamp, "status": 200, "path": "/x", "took": 0.5, "ok": True})] * 3
    assert _agree(JsonLines(FieldNames(), UTC).light(), nginx) == 3  # composed: no message
    kv = [f'time={stamp} level=warn msg="slow query" took=2.5s', f"time={stamp} level=info msg=plain n=1"]
    assert _agree(Logfmt(FieldNames(), UTC).light(), kv) == 2
    text = [f"2026-07-08 14:00:01.12{i} INFO  [main] a.B - line {i}" for i in range(4)]
    assert _agree(RegexFormat(LOGBACK, UTC), [*text, "\tat x.Y.z(Y.java:9)"]) == 4


@st.composite
def json_lines(draw: st.DrawFn) -> list[str]:
    shapes = draw(st.lists(st.lists(KEYS, min_size=1, max_size=6), min_size=1, max_size=3))
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        keys = draw(st.sampled_from(shapes))
        pairs = [(key, draw(VALUE)) for key in keys]  # a key twice is written twice
        spaced = draw(st.booleans())
        body = (", " if spaced else ",").join(
            f"{json.dumps(k)}{': ' if spaced else ':'}{json.dumps(v, ensure_ascii=draw(st.booleans()))}"
            for k, v in pairs
        )
        lines.append(draw(JUNK) + "{" + body + "}" + draw(JUNK))
    return lines


@settings(max_examples=300, deadline=None)
@given(json_lines())
def test_a_json_lane_reads_a_line_only_as_quick_reads_it(lines: list[str]) -> None:
    _agree(JsonLines(FieldNames(), UTC).light(), lines)


@st.composite
def logfmt_lines(draw: st.DrawFn) -> list[str]:
    shapes = draw(st.lists(st.lists(KEYS, min_size=1, max_size=6), min_size=1, max_size=3))
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        parts = []
        for key in draw(st.sampled_from(shapes)):
            value = draw(st.one_of(STAMP, LEVEL, TEXT))
            quoted = draw(st.booleans())
            written = '"' + value.replace('"', '\\"') + '"' if quoted else value
            parts.append(f"{key.strip() or 'k'}={written}" if draw(st.integers(0, 9)) else key)
        lines.append(draw(JUNK) + draw(st.sampled_from([" ", "  "])).join(parts) + draw(JUNK))
    return lines


@settings(max_examples=300, deadline=None)
@given(logfmt_lines())
def test_a_logfmt_lane_reads_a_line_only_as_quick_reads_it(lines: list[str]) -> None:
    _agree(Logfmt(FieldNames(), UTC).light(), lines)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(STAMP, st.sampled_from(["INFO ", "ERROR", "WARN ", "", "info"]), TEXT, TEXT, TEXT),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([LOGBACK, PYTHON]),
)
def test_a_user_pattern_lane_reads_a_line_only_as_quick_reads_it(
    parts: list[tuple[str, str, str, str, str]], pattern: object
) -> None:
    lines = [
        f"{stamp} {level} [{thread}] {logger} - {message}" for stamp, level, thread, logger, message in parts
    ]
    lines += [f"\tat {logger}({message})" for _, _, _, logger, message in parts[:2]]  # stack frames
    _agree(RegexFormat(pattern, UTC), lines)  # type: ignore[arg-type]


TIMES = st.builds(
    "{}-{}{}{}:{}:{}{}{:03d}{}".format,
    st.sampled_from(["2026", "1999"]),
    st.sampled_from(["07-08", "07-09", "12-31", "02-30"]),
    st.sampled_from("T "),
    st.sampled_from(["00", "09", "13", "23", "24", "2x", "-1"]),
    st.sampled_from(["00", "07", "08", "59", "60", "5x"]),
    st.sampled_from(["00", "59", "60", "7x", "05"]),
    st.sampled_from(".,:"),
    st.integers(0, 999),
    st.sampled_from(["", "Z", "+00:00", "+08:00", "-05:30", "5"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(TIMES, max_size=60), st.sampled_from([UTC, timezone(timedelta(hours=8)), "Europe/Paris"]))
def test_the_timestamps_of_many_lines_are_those_of_each(texts: list[str], zone: object) -> None:
    tz = ZoneInfo(zone) if isinstance(zone, str) else zone
    widths = {len(t) for t in texts}
    for width in widths:  # one width (the commonest shape) and every width mixed
        same = [t for t in texts if len(t) == width] * 3
        assert Stamps(tz).many(same) == [Stamps(tz)(t) for t in same]  # type: ignore[arg-type]
    assert Stamps(tz).many(texts) == [Stamps(tz)(t) for t in texts]  # type: ignore[arg-type]
