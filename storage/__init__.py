"""evigate storage: SQLAlchemy models, repositories, alembic migrations, the durable job queue."""

from evigate.storage.case_vectors import CaseVectors
from evigate.storage.db import Database, default_sqlite_url, migrate
from evigate.storage.errors import (
    DatabaseRefused,
    DatabaseUnavailable,
    InvalidPageToken,
    NoAnswer,
    SchemaOutOfDate,
    SessionAlreadyExists,
    SessionNotFound,
    StorageError,
)
from evigate.storage.records import (
    CaseRecord,
    FeedbackOutcome,
    InvocationRecord,
    JobRecord,
    JobStats,
    RoundRecord,
    SessionRecord,
    TraceRecord,
)
from evigate.storage.repository import Repository

__all__ = [
    "CaseRecord",
    "CaseVectors",
    "Database",
    "DatabaseRefused",
    "DatabaseUnavailable",
    "FeedbackOutcome",
    "InvalidPageToken",
    "InvocationRecord",
    "JobRecord",
    "JobStats",
    "NoAnswer",
    "Repository",
    "RoundRecord",
    "SchemaOutOfDate",
    "SessionAlreadyExists",
    "SessionNotFound",
    "SessionRecord",
    "StorageError",
    "TraceRecord",
    "default_sqlite_url",
    "migrate",
]
