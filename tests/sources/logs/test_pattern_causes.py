"""A template's ref says why its example failed: the example event's exception chain or its
record's error field, read again whole after mining (which reads messages only)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from evigate.server.agents.offline.readable import _log_line, _pattern
from evigate.server.queries.types import PatternsQuery, TimeWindow
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs import LogConfig
from evigate.server.sources.logs.events import ExceptionInfo, LogEvent
from evigate.server.sources.logs.items import CAUSE_CHARS, cause_of
from evigate.server.sources.logs.patterns import Pattern, pattern_ref_text

AT = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)


def test_the_cause_is_the_exception_chain_else_the_error_field() -> None:
    chained = LogEvent(
        AT,
        "ERROR",
        "vault-sync",
        "sync aborted",
        exceptions=(ExceptionInfo("a.b.SyncFailed", "page 4"), ExceptionInfo("c.d.LockLost", "lease 9")),
    )
    assert cause_of(chained) == "a.b.SyncFailed: page 4 ← Caused by: c.d.LockLost: lease 9"
    fielded = LogEvent(AT, "ERROR", "vault-sync", "sync aborted", fields={"err": "lease 9 expired (EPIPE)"})
    assert cause_of(fielded) == "lease 9 expired (EPIPE)"
    plain = LogEvent(AT, "ERROR", "vault-sync", "sync aborted", fields={"logger": "sync"})
    assert cause_of(plain) == ""


def test_the_ref_and_the_readable_sentence_carry_the_cause() -> None:
    pattern = Pattern("sync aborted", 3, AT, AT, ("ERROR",), "sync aborted", cause="lease 9 expired (EPIPE)")
    text = pattern_ref_text(pattern)
    assert ' | cause="lease 9 expired (EPIPE)"' in text
    phrase = _pattern(text, "vault-sync", zh=False)
    assert phrase is not None and "lease 9 expired (EPIPE)" in phrase.sentence


def test_summarize_logs_reads_the_error_field_of_a_json_record(tmp_path: Path) -> None:
    records = [
        {
            "time": f"2031-03-04T05:0{i}:00Z",
            "level": "error",
            "msg": "push to ledger failed",
            "err": "dial tcp 10.9.8.7:4410: connect: connection refused",
        }
        for i in range(3)
    ] + [{"time": "2031-03-04T05:05:00Z", "level": "info", "msg": "tick"}]
    (tmp_path / "vault-sync.log").write_text("".join(json.dumps(r) + "\n" for r in records))
    query = PatternsQuery(service="vault-sync", level="WARN", window=TimeWindow(None, None), limit=10)
    page = LogFiles(LogConfig(root=tmp_path)).summarize(query)
    (item,) = page.items
    assert item["cause"] == "dial tcp 10.9.8.7:4410: connect: connection refused"


def test_a_template_names_the_service_it_was_asked_for() -> None:
    from evigate.server.agents.offline.answer_writer import _PATTERN_SERVICE
    from evigate.server.sources.logs.items import pattern_item
    from evigate.server.tools.summarize_logs import pattern_text

    pattern = Pattern("sync aborted", 3, AT, AT, ("ERROR",), "sync aborted")
    text = pattern_text({**pattern_item(pattern), "service": "vault-sync"})
    assert text == pattern_ref_text(pattern) + " | service=vault-sync"
    found = _PATTERN_SERVICE.search(text)
    assert found is not None and found.group(1) == "vault-sync"
    phrase = _pattern(text, found.group(1), zh=False)
    assert phrase is not None and phrase.sentence.startswith("vault-sync logged 3 errors")


def test_a_long_chain_keeps_its_root_cause_whole() -> None:
    # Spring's outer messages are long; the root cause, last, is what a reader needs
    outer = ExceptionInfo("org.springframework.transaction.CannotCreateTransactionException", "x" * 200)
    middle = ExceptionInfo("org.hibernate.exception.JDBCConnectionException", "y" * 150)
    root = ExceptionInfo("org.postgresql.util.PSQLException", "FATAL: sorry, too many clients already")
    event = LogEvent(AT, "ERROR", "router", "routing failed", exceptions=(outer, middle, root))
    cause = cause_of(event)
    assert len(cause) <= CAUSE_CHARS
    assert cause.startswith("org.springframework.transaction.CannotCreateTransactionException")
    assert cause.endswith("Caused by: " + str(root))
    text = pattern_ref_text(Pattern("routing failed", 2, AT, AT, ("ERROR",), "routing failed", cause=cause))
    phrase = _pattern(text, "router", zh=False)
    assert phrase is not None and "sorry, too many clients already" in phrase.sentence


def test_a_matching_line_quotes_its_error_field_whole_quotes_inside_and_all() -> None:
    error = 'rpc error: code = Unavailable desc = "dial tcp 10.1.2.3:9090: connect: connection refused"'
    text = f"2031-03-04 05:06:07 ERROR points sync failed | pod=points-0; error={error}; member=M-1"
    phrase = _log_line(text, zh=False)
    assert "connect: connection refused" in phrase.sentence
    assert "member" not in phrase.sentence
