"""The root of every error evigate raises (docs/design.md §3.4).

Each subclass says what it means to a caller: a gRPC status code (as its name, so that rules/ and
storage/ need not import grpc), the AIP-193 ErrorInfo reason, the message a client may read, and
the plain data of any richer detail (field violations, the resource, a precondition, when to
retry). server/grpc/errors.py holds the one table that turns these into grpc.StatusCode and a
google.rpc.Status; nothing else maps errors to codes.

The defaults are those of a bug: INTERNAL, reason INTERNAL, the message "internal error" (the
exception's own text may name internals, so it is logged, never sent). An error a client should
see says so by overriding them. This module imports nothing of evigate, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar


class StatusCode(StrEnum):
    """The gRPC status codes, by name (grpc.StatusCode[name] is the code itself)."""

    OK = "OK"
    CANCELLED = "CANCELLED"
    UNKNOWN = "UNKNOWN"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    ABORTED = "ABORTED"
    OUT_OF_RANGE = "OUT_OF_RANGE"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    INTERNAL = "INTERNAL"
    UNAVAILABLE = "UNAVAILABLE"
    DATA_LOSS = "DATA_LOSS"
    UNAUTHENTICATED = "UNAUTHENTICATED"


@dataclass(frozen=True)
class FieldViolation:
    """One bad request field (google.rpc.BadRequest.FieldViolation)."""

    field: str
    description: str


@dataclass(frozen=True)
class PreconditionViolation:
    """One unmet precondition (google.rpc.PreconditionFailure.Violation)."""

    type: str
    subject: str
    description: str


@dataclass(frozen=True)
class ResourceRef:
    """The resource an error is about (google.rpc.ResourceInfo)."""

    resource_type: str
    resource_name: str


class EvigateError(Exception):
    """Base class of every evigate error; see the module docstring for what a subclass sets."""

    status_code: ClassVar[StatusCode] = StatusCode.INTERNAL
    error_reason: ClassVar[str] = "INTERNAL"  # AIP-193 ErrorInfo.reason: UPPER_SNAKE_CASE
    # False: a bare status with no google.rpc.Status details (deadline, cancellation).
    rich_details: ClassVar[bool] = True

    def status_message(self) -> str:
        """The message a client reads."""
        return "internal error"

    def error_info(self) -> tuple[str, Mapping[str, str]]:
        """ErrorInfo's reason and metadata (the ids a client needs to act on the error)."""
        return self.error_reason, {}

    def field_violations(self) -> Sequence[FieldViolation] | None:
        """None: no BadRequest detail (an empty sequence still sends one)."""
        return None

    def resource(self) -> ResourceRef | None:
        return None

    def precondition_violations(self) -> Sequence[PreconditionViolation] | None:
        return None

    def retry_after_seconds(self) -> float | None:
        """When trying again is worth it (google.rpc.RetryInfo); None: no advice."""
        return None
