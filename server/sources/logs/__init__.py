"""Reading log files as they really are: JSON lines, logfmt and plain text, in plain trees, Kubernetes
and Docker layouts, rotated and compressed, multi-line events, bad lines skipped and counted, and
the templates (patterns) that group them."""

from .events import ExceptionInfo, LineFields, LineFormat, LogEvent, SkippedLine, SkipReport
from .log_config import FieldNames, LogConfig, UserPattern
from .search import LogReader, LogSearch, SearchResult, search

__all__ = [
    "ExceptionInfo",
    "FieldNames",
    "LineFields",
    "LineFormat",
    "LogConfig",
    "LogEvent",
    "LogReader",
    "LogSearch",
    "SearchResult",
    "SkipReport",
    "SkippedLine",
    "UserPattern",
    "search",
]
