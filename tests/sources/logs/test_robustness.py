"""Data that would break a naive reader: huge lines, binary files, garbage between events, a
runtime's partial record at the end of a file, raw stack traces between JSON lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

from evigate.server.sources.logs import LogConfig, LogReader, LogSearch


def _json(moment: str, message: str, level: str = "INFO") -> bytes:
    return json.dumps({"time": moment, "level": level, "msg": message}).encode() + b"\n"


def test_an_overlong_line_is_skipped_without_being_held(tmp_path: Path) -> None:
    blob = b"A" * (3 * 2**20)  # no newline for 3 MiB
    (tmp_path / "api.log").write_bytes(
        _json("2026-07-08T23:00:00Z", "before") + blob + b"\n" + _json("2026-07-08T23:00:01Z", "after")
    )
    logs = LogReader(LogConfig(root=tmp_path))
    result = logs.search(LogSearch())
    assert [e.message for e in result.events] == ["after", "before"]
    assert [str(s) for s in result.skipped.first] == ["api.log:2 (longer than 1 MiB)"]
    assert logs.search(LogSearch(keyword="after")).events[0].line == 3
    (index,) = logs.refresh().indexes
    # The gap of garbage closes a block: neither block (nor event) holds the blob's bytes.
    assert [b.stop - b.start for b in index.blocks] == [
        len(_json("2026-07-08T23:00:00Z", "before")),
        len(_json("2026-07-08T23:00:01Z", "after")),
    ]


def test_a_binary_file_among_logs(tmp_path: Path) -> None:
    rng = random.Random(3)
    (tmp_path / "core.log").write_bytes(bytes(rng.randrange(256) for _ in range(200_000)))
    (tmp_path / "api.log").write_bytes(_json("2026-07-08T23:00:00Z", "fine", "ERROR"))
    (tmp_path / "empty.log").write_bytes(b"")
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(level="ERROR"))
    assert [e.message for e in result.events] == ["fine"]
    everything = LogReader(LogConfig(root=tmp_path)).search(LogSearch())
    assert everything.skipped.count > 0
    assert {s.file for s in everything.skipped.first} == {"core.log"}


def test_a_partial_runtime_record_at_the_end_is_still_an_event(tmp_path: Path) -> None:
    pods = tmp_path / "pods" / "prod_web-6c8f9d7b5-x7k2p_0a1b2c3d-0000-1111-2222-333344445555" / "web"
    pods.mkdir(parents=True)
    (pods / "0.log").write_text(
        "2026-07-08T23:00:00.000000001Z stdout F 2026-07-08T23:00:00Z INFO ready\n"
        "2026-07-08T23:00:01.000000001Z stdout P 2026-07-08T23:00:01Z WARN cut off by a restart"
    )
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch())
    assert [(e.service, e.level, e.message) for e in result.events] == [
        ("web", "WARN", "cut off by a restart"),
        ("web", "INFO", "ready"),
    ]


def test_a_raw_stack_trace_between_json_lines_joins_the_json_event(tmp_path: Path) -> None:
    (tmp_path / "api.log").write_bytes(
        _json("2026-07-08T23:00:00Z", "request failed", "ERROR")
        + b"java.lang.IllegalStateException: closed\n\tat a.B.c(B.java:1)\n"
        + _json("2026-07-08T23:00:01Z", "next")
    )
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch(keyword="IllegalState"))
    (event,) = result.events
    assert (event.message, event.chain_text(), result.skipped.count) == (
        "request failed",
        "java.lang.IllegalStateException: closed",
        0,
    )


def test_many_raw_stack_traces_do_not_hide_a_json_file(tmp_path: Path) -> None:
    trace = b"java.lang.IllegalStateException: closed\nCaused by: java.io.IOException: reset\n\tat a.B.c\n"
    records = [_json(f"2026-07-08T23:00:0{i}Z", f"failure {i}", "ERROR") + trace for i in range(5)]
    (tmp_path / "api.log").write_bytes(b"".join(records))
    result = LogReader(LogConfig(root=tmp_path)).search(LogSearch())
    assert {e.parser for e in result.events} == {"json"}
    assert [e.chain_text() for e in result.events] == [
        "java.lang.IllegalStateException: closed ← Caused by: java.io.IOException: reset"
    ] * 5


def test_a_service_field_holding_ids_does_not_overflow_the_index(tmp_path: Path) -> None:
    """A misleading alias (`app` holding a request id on every line) makes 66,000 'services'."""
    lines = (
        json.dumps({"time": "2026-07-08T23:00:00Z", "level": "info", "app": f"req-{i}", "msg": "m"})
        for i in range(66_000)
    )
    (tmp_path / "api.log").write_text("\n".join(lines) + "\n")
    logs = LogReader(LogConfig(root=tmp_path))
    assert logs.search(LogSearch(service="req-65999")).total == 1
    assert logs.search(LogSearch(limit=1)).total == 66_000
