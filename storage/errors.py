"""The storage error hierarchy; `server` maps these to gRPC status codes in one place."""

from __future__ import annotations


class StorageError(Exception):
    """Base class of every error raised by `storage`."""


class DatabaseUnavailable(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """The database cannot be reached (refused, dropped connection, timeout): UNAVAILABLE.
    `retry_after_s`: when it is worth trying again (the client's google.rpc.RetryInfo)."""

    def __init__(self, message: str = "database unreachable", retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class SchemaOutOfDate(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """The database schema is missing or older than this code; run `evigate migrate`."""


class SessionNotFound(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """No diagnosis_session row has this session_id."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session not found: {session_id}")
        self.session_id = session_id


class SessionAlreadyExists(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """A diagnosis_session row with this session_id exists already."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session already exists: {session_id}")
        self.session_id = session_id


class NoAnswer(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """`useful` feedback on a session that has no answer to turn into a case."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session has no answer: {session_id}")
        self.session_id = session_id


class InvalidPageToken(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """A list page token that this service did not issue (or that was altered)."""
