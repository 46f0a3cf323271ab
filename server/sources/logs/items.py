"""What query_logs and summarize_logs result items look like, for the tools to return.

A log item keeps the shape the bundled NDJSON items always had (timestamp, level, service, message,
then the record's other fields in their order), so the evidence ref text built from it holds the
first line of the event and, for a stack trace, its exception chain (class, message, each
`Caused by`) and its top frames — not every frame. Where each
event came from and which parser read its file are reported once per result, not per item."""

from __future__ import annotations

import re

from ..times import display_time
from .events import LogEvent, SkipReport
from .patterns import Pattern, bucket_text, pattern_time

TOP_FRAMES = 3
# A stack frame: Java / JavaScript `at ...`, Python `File "...", line n, in f`, Go `\t/path.go:12`.
_FRAME = re.compile(r"\s+(?:at \S|File \"|/\S+\.go:\d+)")


def top_frames(event: LogEvent) -> str:
    """The first frames of the event's stack trace, innermost call of the outermost exception first
    as printed: where it was thrown."""
    frames = [line.strip() for line in event.continuation if _FRAME.match(line)]
    return " | ".join(frames[:TOP_FRAMES])


def log_item(event: LogEvent) -> dict[str, str]:
    item = {
        "timestamp": display_time(event.timestamp),
        "level": event.level,
        "service": event.service,
        "message": event.message,
    }
    for key, value in event.fields.items():
        item.setdefault(key, value)
    if event.exceptions:
        item["exception"] = event.chain_text()
    elif event.continuation:  # a carried trace the chain reader found no exception in: its first line
        item["exception"] = event.continuation[0].strip()
    if frames := top_frames(event):
        item["frames"] = frames
    return item


def skipped_summary(report: SkipReport) -> dict[str, object]:
    """`skipped_lines`: lines of the files this query read that could not be read (undecodable,
    binary, truncated, in no known format), and where the first few are."""
    return {"skipped_lines": report.count, "skipped_at": [str(s) for s in report.first]}


def pattern_item(pattern: Pattern) -> dict[str, object]:
    """A summarize_logs item: its ref text is `patterns.pattern_ref_text` of the same pattern."""
    return {
        "template": pattern.template,
        "count": pattern.count,
        "first": pattern_time(pattern.first),
        "last": pattern_time(pattern.last),
        "levels": list(pattern.levels),
        "example": pattern.example,
        **({"severe": pattern.severe} if pattern.severe else {}),
        **({"change": pattern.change.text()} if pattern.change else {}),
        **({"slots": [slot.text() for slot in pattern.slots]} if pattern.slots else {}),
        **({"per_bucket": text} if (text := bucket_text(pattern.buckets)) else {}),
        **({"cause": pattern.cause} if pattern.cause else {}),
    }


# A record's fields that say why it failed (JSON loggers: pino / bunyan `err`, zap / logrus `error`,
# structlog `exception`), as a reader would look for them.
CAUSE_FIELDS = ("error", "err", "error.message", "err.message", "error_message", "errorMessage")
CAUSE_FIELDS_MORE = ("exception", "exc_info", "reason", "cause", "error.msg", "err.msg")
CAUSE_CHARS = 300


def cause_of(event: LogEvent) -> str:
    """Why the event failed, as it says: its exception chain, else its record's error field."""
    if event.exceptions:
        return _chain_within(event, CAUSE_CHARS)
    for key in (*CAUSE_FIELDS, *CAUSE_FIELDS_MORE):
        value = event.fields.get(key)
        if value and value.strip() and value != event.message:
            return " ".join(value.split())[:CAUSE_CHARS]
    return ""


def _chain_within(event: LogEvent, limit: int) -> str:
    """The exception chain in `limit` characters: a chain too long for it keeps its outermost link
    and its root cause (the last `Caused by`, what a reader looks for), each cut to its share, and
    leaves the links between out, so a cut never falls in the root cause's message."""
    text = event.chain_text()
    if len(text) <= limit or len(event.exceptions) < 2:
        return text[:limit]
    joint = " ← … ← Caused by: "
    share = (limit - len(joint)) // 2
    outer, root = str(event.exceptions[0]), str(event.exceptions[-1])
    root = root[:share]
    return f"{outer[: limit - len(joint) - len(root)]}{joint}{root}"
