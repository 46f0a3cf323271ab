"""The records and errors the use cases hand to front ends, named here so a front end (server.web)
reads them from the use-case layer and never imports storage itself (server.grpc, server.cli and
server.web alike)."""

from __future__ import annotations

from evigate.storage.errors import (
    DatabaseUnavailable,
    InvalidPageToken,
    NoAnswer,
    SessionNotFound,
    StorageError,
)
from evigate.storage.records import (
    CaseRecord,
    InvocationRecord,
    JobStats,
    RoundRecord,
    SessionRecord,
    TraceRecord,
)

__all__ = [
    "CaseRecord",
    "DatabaseUnavailable",
    "InvalidPageToken",
    "InvocationRecord",
    "JobStats",
    "NoAnswer",
    "RoundRecord",
    "SessionNotFound",
    "SessionRecord",
    "StorageError",
    "TraceRecord",
]
