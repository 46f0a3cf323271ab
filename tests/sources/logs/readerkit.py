"""What the reader tests share: the committed sample trees and the user patterns they need."""

from __future__ import annotations

from pathlib import Path

from evigate.server.sources.logs import LogConfig, LogReader, LogSearch, SearchResult, UserPattern

SAMPLES = Path(__file__).parent / "samples"

# logback's `%d{yyyy-MM-dd HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n`
LOGBACK = UserPattern(
    "logback",
    r"(?P<timestamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) +(?P<level>[A-Z]+) +\[(?P<thread>[^\]]+)\] "
    r"(?P<logger>\S+) - (?P<message>.*)",
)
# Python logging's `%(asctime)s %(levelname)s [%(name)s] %(message)s`
PYTHON = UserPattern(
    "python",
    r"(?P<timestamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?P<level>[A-Z]+) \[(?P<logger>[^\]]+)\] "
    r"(?P<message>.*)",
)


def reader(tree: str | Path, **options: object) -> LogReader:
    root = tree if isinstance(tree, Path) else SAMPLES / tree
    return LogReader(LogConfig(root=root, patterns=(LOGBACK, PYTHON), **options))  # type: ignore[arg-type]


def everything(tree: str | Path, **filters: object) -> SearchResult:
    return reader(tree).search(LogSearch(limit=1000, **filters))  # type: ignore[arg-type]
