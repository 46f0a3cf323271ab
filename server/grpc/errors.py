"""The one place that maps domain errors to gRPC status codes with rich details (AIP-193).

Servicers raise domain errors (storage.errors, SessionRunning, CodecError, InvalidArgumentError); the
error interceptor calls `to_status()` and aborts the call with the code, a message, and a
google.rpc.Status in the `grpc-status-details-bin` trailer (BadRequest field violations,
ErrorInfo with domain "evigate", PreconditionFailure, ResourceInfo).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from evigate.server.deadline import DeadlineExceeded
from evigate.server.pipeline import SessionRunning
from evigate.storage.errors import (
    DatabaseUnavailable,
    InvalidPageToken,
    NoAnswer,
    SchemaOutOfDate,
    SessionAlreadyExists,
    SessionNotFound,
)

DOMAIN = "evigate"
DETAILS_KEY = "grpc-status-details-bin"
log = logging.getLogger("evigate.grpc")


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


@dataclass
class InvalidArgumentError(Exception):
    """Bad input: one or more field violations."""

    reason: str
    violations: Sequence[FieldViolation] = field(default_factory=tuple)

    def __str__(self) -> str:
        return "; ".join(f"{v.field}: {v.description}" for v in self.violations) or self.reason


@dataclass
class Unauthenticated(Exception):  # noqa: N818 - named after the status it maps to
    """No bearer token, or one that matches no configured token."""

    token_presented: bool

    def __str__(self) -> str:
        return "invalid bearer token" if self.token_presented else "missing bearer token"


@dataclass(frozen=True)
class RpcStatus:
    code: grpc.StatusCode
    message: str
    proto: status_pb2.Status | None = None

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        return () if self.proto is None else ((DETAILS_KEY, self.proto.SerializeToString()),)


def _pack(*messages: object) -> list[any_pb2.Any]:
    packed = []
    for message in messages:
        item = any_pb2.Any()
        item.Pack(message)  # type: ignore[arg-type]
        packed.append(item)
    return packed


def _status(
    code: grpc.StatusCode, message: str, reason: str, metadata: dict[str, str], *extra: object
) -> RpcStatus:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata)
    proto = status_pb2.Status(code=code.value[0], message=message, details=_pack(info, *extra))
    return RpcStatus(code, message, proto=proto)


def invalid_argument(error: InvalidArgumentError) -> RpcStatus:
    bad = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
            for v in error.violations
        ]
    )
    return _status(grpc.StatusCode.INVALID_ARGUMENT, str(error), error.reason, {}, bad)


def to_status(error: BaseException) -> RpcStatus:
    """The status a domain error maps to. Unknown exceptions are bugs: INTERNAL (and logged)."""
    if isinstance(error, InvalidArgumentError):
        return invalid_argument(error)
    if isinstance(error, Unauthenticated):
        reason = "INVALID_TOKEN" if error.token_presented else "MISSING_TOKEN"
        return _status(
            grpc.StatusCode.UNAUTHENTICATED,
            f"{error}; send `authorization: Bearer <token>`",
            reason,
            {"header": "authorization"},
        )
    if isinstance(error, InvalidPageToken):
        return invalid_argument(
            InvalidArgumentError(
                "INVALID_PAGE_TOKEN", (FieldViolation("page_token", "not a token issued by this service"),)
            )
        )
    if isinstance(error, SessionNotFound):
        resource = error_details_pb2.ResourceInfo(
            resource_type="evigate.v1.DiagnosisSession", resource_name=error.session_id
        )
        return _status(
            grpc.StatusCode.NOT_FOUND,
            f"session {error.session_id!r} not found",
            "SESSION_NOT_FOUND",
            {"session_id": error.session_id},
            resource,
        )
    if isinstance(error, NoAnswer):
        failure = error_details_pb2.PreconditionFailure(
            violations=[
                error_details_pb2.PreconditionFailure.Violation(
                    type="SESSION_HAS_NO_ANSWER",
                    subject=f"sessions/{error.session_id}",
                    description="useful feedback needs a session that produced an answer",
                )
            ]
        )
        return _status(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"session {error.session_id!r} has no answer to mark useful",
            "SESSION_HAS_NO_ANSWER",
            {"session_id": error.session_id},
            failure,
        )
    if isinstance(error, SessionRunning | SessionAlreadyExists):
        session_id = str(error.args[0]) if error.args else ""
        if isinstance(error, SessionAlreadyExists):
            session_id = error.session_id
        return _status(
            grpc.StatusCode.ALREADY_EXISTS,
            f"session {session_id!r} is still running; retry later or read it with GetTrace",
            "SESSION_RUNNING",
            {"session_id": session_id},
        )
    if isinstance(error, DatabaseUnavailable):
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(timedelta(seconds=max(error.retry_after_s, 0.1)))
        return _status(
            grpc.StatusCode.UNAVAILABLE, "the database is unavailable", "DATABASE_UNAVAILABLE", {}, retry
        )
    if isinstance(error, SchemaOutOfDate):
        return _status(
            grpc.StatusCode.UNAVAILABLE,
            "the database schema is out of date; run `evigate migrate`",
            "SCHEMA_OUT_OF_DATE",
            {},
        )
    if isinstance(error, DeadlineExceeded | TimeoutError):
        return RpcStatus(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")
    if isinstance(error, asyncio.CancelledError):
        return RpcStatus(grpc.StatusCode.CANCELLED, "cancelled")
    log.error("unexpected error", exc_info=error)
    return _status(grpc.StatusCode.INTERNAL, "internal error", "INTERNAL", {})


def code_of(status_code: grpc.StatusCode) -> int:
    return int(status_code.value[0])


__all__ = ["DOMAIN", "FieldViolation", "InvalidArgumentError", "RpcStatus", "Unauthenticated", "to_status"]
