"""What a query_logs result item and its skipped-lines summary look like, for the tool to return.

The item keeps the shape the existing log items have (timestamp, level, service, message, then
the extras), so the evidence ref text built from it holds the first line of the event and, for a
stack trace, its exception chain — not every frame."""

from __future__ import annotations

from ..times import display_time
from .events import LogEvent, SkipReport


def log_item(event: LogEvent) -> dict[str, str]:
    item = {
        "timestamp": display_time(event.timestamp),
        "level": event.level,
        "service": event.service,
        "message": event.message,
    }
    if event.exceptions:
        item["exception"] = event.chain_text()
    for key, value in event.fields.items():
        item.setdefault(key, value)
    item["source"] = f"{event.file}:{event.line}"
    item["parser"] = event.parser
    return item


def skipped_summary(report: SkipReport) -> dict[str, object]:
    """`skipped_lines`: lines of the files this query read that could not be read (undecodable,
    binary, truncated, in no known format), and where the first few are."""
    return {"skipped_lines": report.count, "skipped_at": [str(s) for s in report.first]}
