"""The plain-text seam: a LineFormat written elsewhere (the shipped named patterns) plugs into the
reader through `parse(line) -> object with timestamp, level, message` plus optional attributes."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evigate.server.sources.logs import LogConfig
from evigate.server.sources.logs.layouts import LogSource
from evigate.server.sources.logs.reader import Draft, FileFormat, StreamParser, finish, raw_lines


@dataclass(frozen=True)
class SyslogLine:
    """Shaped like another module's ParsedLine: its own attribute names beyond the three required."""

    timestamp: datetime | None
    level: str | None
    message: str
    logger: str | None
    pid: int | None
    thread: str | None = None


class Rfc5424:
    """A minimal syslog parser standing in for the shipped one; it has no `fields`, no `service`."""

    name = "syslog-5424"
    _line = re.compile(r"<(\d+)>1 (\S+) \S+ (\S+) (\d+|-) \S+ \S+ (.*)")

    def parse(self, line: str) -> SyslogLine | None:
        match = self._line.match(line)
        if match is None:
            return None
        pri, stamp, app, pid, message = match.groups()
        severity = ("fatal", "fatal", "critical", "error", "warning", "notice", "info", "debug")[int(pri) % 8]
        when = datetime.fromisoformat(stamp).astimezone(UTC)
        return SyslogLine(when, severity, message, app, None if pid == "-" else int(pid))


def test_an_outside_line_format_reads_events_and_stack_traces() -> None:
    data = (
        b"<11>1 2026-07-09T07:05:28.123+08:00 host-1 payments 4242 - - charge failed id=C9\n"
        b"java.lang.IllegalStateException: gateway closed\n"
        b"\tat a.B.c(B.java:1)\n"
        b"not syslog at all\n"
        b"<14>1 2026-07-08T23:05:29Z host-1 payments 4242 - - charge ok id=C10\n"
    )
    file_format = FileFormat("", Rfc5424())
    source = LogSource("syslog", (), "host-1")
    items = list(StreamParser("syslog", file_format).run(raw_lines(io.BytesIO(data))))
    drafts = [i for i in items if isinstance(i, Draft)]
    events = [finish(d, source, file_format, "syslog", LogConfig(root=Path("."))) for d in drafts]
    assert [(e.level, e.message, e.parser) for e in events] == [
        ("ERROR", "charge failed id=C9", "syslog-5424"),
        ("INFO", "charge ok id=C10", "syslog-5424"),
    ]
    assert events[0].timestamp == datetime(2026, 7, 8, 23, 5, 28, 123000, tzinfo=UTC)
    assert events[0].fields == {"logger": "payments", "pid": "4242"}
    assert events[0].service == "host-1"  # the layout's: this format names no service
    assert events[0].chain_text() == "java.lang.IllegalStateException: gateway closed"
    assert [str(i) for i in items if not isinstance(i, Draft)] == ["syslog:4 (not syslog-5424)"]
