"""The storage errors: each carries its gRPC status code, reason and client message
(rules.errors, docs/design.md §3.4); server/grpc/errors.py turns them into statuses in one table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evigate.rules.errors import (
    EvigateError,
    FieldViolation,
    PreconditionViolation,
    ResourceRef,
    StatusCode,
)

SESSION_RESOURCE = "evigate.v1.DiagnosisSession"


class StorageError(EvigateError):
    """Base class of every error raised by `storage`."""


class DatabaseUnavailable(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """The database cannot be reached (refused, dropped connection, timeout): UNAVAILABLE.
    `retry_after_s`: when it is worth trying again (the client's google.rpc.RetryInfo)."""

    status_code = StatusCode.UNAVAILABLE
    error_reason = "DATABASE_UNAVAILABLE"

    def __init__(self, message: str = "database unreachable", retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def status_message(self) -> str:
        return "the database is unavailable"

    def retry_after_seconds(self) -> float | None:
        return self.retry_after_s


class DatabaseRefused(DatabaseUnavailable):
    """Refused by the open breaker (storage.breaker) before anything was sent: the unit of work
    wrote nothing, so a session whose INSERT was refused does not exist (and is not counted)."""


class SchemaOutOfDate(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """The database schema is missing or older than this code; run `evigate migrate`."""

    status_code = StatusCode.UNAVAILABLE
    error_reason = "SCHEMA_OUT_OF_DATE"

    def status_message(self) -> str:
        return "the database schema is out of date; run `evigate migrate`"


class _SessionError(StorageError):
    """An error about one session: its id is the ErrorInfo metadata."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id

    def error_info(self) -> tuple[str, Mapping[str, str]]:
        return self.error_reason, {"session_id": self.session_id}


class SessionNotFound(_SessionError):  # noqa: N818 - domain names read as events, like TimeoutError
    """No diagnosis_session row has this session_id."""

    status_code = StatusCode.NOT_FOUND
    error_reason = "SESSION_NOT_FOUND"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session not found: {session_id}", session_id)

    def status_message(self) -> str:
        return f"session {self.session_id!r} not found"

    def resource(self) -> ResourceRef | None:
        return ResourceRef(SESSION_RESOURCE, self.session_id)


class SessionAlreadyExists(_SessionError):  # noqa: N818 - domain names read as events, like TimeoutError
    """A diagnosis_session row with this session_id exists already (to the client: still running,
    the same status as server.pipeline.SessionRunning)."""

    status_code = StatusCode.ALREADY_EXISTS
    error_reason = "SESSION_RUNNING"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session already exists: {session_id}", session_id)

    def status_message(self) -> str:
        return f"session {self.session_id!r} is still running; retry later or read it with GetTrace"


class NoAnswer(_SessionError):  # noqa: N818 - domain names read as events, like TimeoutError
    """`useful` feedback on a session that has no answer to turn into a case."""

    status_code = StatusCode.FAILED_PRECONDITION
    error_reason = "SESSION_HAS_NO_ANSWER"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session has no answer: {session_id}", session_id)

    def status_message(self) -> str:
        return f"session {self.session_id!r} has no answer to mark useful"

    def precondition_violations(self) -> Sequence[PreconditionViolation] | None:
        return (
            PreconditionViolation(
                type="SESSION_HAS_NO_ANSWER",
                subject=f"sessions/{self.session_id}",
                description="useful feedback needs a session that produced an answer",
            ),
        )


class InvalidPageToken(StorageError):  # noqa: N818 - domain names read as events, like TimeoutError
    """A list page token that this service did not issue (or that was altered)."""

    status_code = StatusCode.INVALID_ARGUMENT
    error_reason = "INVALID_PAGE_TOKEN"
    _VIOLATION = FieldViolation("page_token", "not a token issued by this service")

    def status_message(self) -> str:
        return f"{self._VIOLATION.field}: {self._VIOLATION.description}"

    def field_violations(self) -> Sequence[FieldViolation] | None:
        return (self._VIOLATION,)
