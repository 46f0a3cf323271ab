"""How to read a log tree: field names, user patterns, defaults. One typed object, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from pathlib import Path

# Alias lists, first match wins; a dotted name is a nested path (`kubernetes.labels.app`), tried
# both as a nested path and as a literal key (`{"log.level": ...}` as ECS writes it).
TIME_KEYS = ("@timestamp", "timestamp", "time", "ts", "datetime", "date", "t", "time_iso8601", "asctime")
LEVEL_KEYS = ("level", "severity", "lvl", "log.level", "levelname", "loglevel", "log_level", "@l", "l")
MESSAGE_KEYS = ("message", "msg", "log", "@m", "@mt", "m", "text", "event")
SERVICE_KEYS = (
    "service", "service.name", "app", "application", "kubernetes.labels.app",
    "kubernetes.labels.app.kubernetes.io/name", "kubernetes.container_name", "container_name",
    "serviceName", "service_name", "appname",
)  # fmt: skip
EXCEPTION_KEYS = (
    "stack_trace", "stacktrace", "exception", "exc_info", "error.stack_trace", "error.stack", "stack",
    "exception.stacktrace", "err.stack", "throwable",
)  # fmt: skip
# File stems that name no service: take the parent directory's name instead.
GENERIC_STEMS = frozenset(
    {"app", "application", "current", "output", "stdout", "stderr", "server", "service", "main", "log",
     "logs", "access", "error", "all", "json", "combined", "out", "err", "messages", "syslog"}
)  # fmt: skip


@dataclass(frozen=True)
class FieldNames:
    """Which keys of a JSON or logfmt record hold the four core fields (and a stack trace)."""

    time: tuple[str, ...] = TIME_KEYS
    level: tuple[str, ...] = LEVEL_KEYS
    message: tuple[str, ...] = MESSAGE_KEYS
    service: tuple[str, ...] = SERVICE_KEYS
    exception: tuple[str, ...] = EXCEPTION_KEYS


@dataclass(frozen=True)
class UserPattern:
    """A plain-text format from configuration: a regex with named groups.

    Groups named `timestamp` (or `time`), `level`, `message` (or `msg`), `service`, `logger`,
    `thread`, `pid`; any other named group becomes an extra field. `time_format` is a strptime
    format for timestamps ISO 8601 does not cover."""

    name: str
    regex: str
    time_format: str | None = None


@dataclass(frozen=True)
class LogConfig:
    root: Path
    fields: FieldNames = field(default_factory=FieldNames)
    patterns: tuple[UserPattern, ...] = ()
    default_tz: tzinfo = UTC  # for timestamps written without a zone
    default_level: str = "INFO"  # one of events.LEVELS, for records without a level (nginx access logs)
    generic_stems: frozenset[str] = GENERIC_STEMS
    # Files to read under root: anything that looks like a log (by name); the rest is ignored.
    suffixes: tuple[str, ...] = (".log", ".ndjson", ".jsonl", ".json", ".txt", ".out", ".logfmt")
    sample_lines: int = 50  # lines looked at to detect a file's format
    block_events: int = 2048  # events per index block (time range, levels, services)
    skipped_keep: int = 5  # how many skipped-line locations a result lists
    # A keyword query scans a file not indexed yet from this size on (scan.py); a smaller one is
    # indexed at once (a fraction of a second), which also counts its unreadable lines.
    scan_from_bytes: int = 4 * 2**20
    index_file: Path | None = None  # where the indexes persist (store.location()); None: in memory only
    # A tree that does not change once written (a cluster dump's pod logs): its files are found
    # once, not walked again by every query.
    static: bool = False
    # The background build of a tree with at least `parallel_from_bytes` to read spreads its files
    # over worker processes (parallel.py), one per core when `index_workers` is 0; below, or with
    # one worker, it reads them in its own thread.
    index_workers: int = 0
    parallel_from_bytes: int = 64 * 2**20
