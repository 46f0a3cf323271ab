"""The one place that maps errors to gRPC statuses with rich details (AIP-193, docs/design.md §3.4).

Every evigate error is a rules.errors.EvigateError that carries its status code (by name), its
ErrorInfo reason, its client message and the plain data of its details. `to_status()` — called by
the error interceptor on whatever a handler raises — turns that into the grpc.StatusCode (the
table `GRPC_CODES`) and a google.rpc.Status in the `grpc-status-details-bin` trailer: ErrorInfo
with domain "evigate", then BadRequest field violations, ResourceInfo, PreconditionFailure or
RetryInfo when the error has them. Anything else is a bug: INTERNAL, logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import ClassVar

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from evigate.rules.errors import EvigateError, FieldViolation, StatusCode
from evigate.server.deadline import DeadlineExceeded

DOMAIN = "evigate"
DETAILS_KEY = "grpc-status-details-bin"
MIN_RETRY_DELAY_S = 0.1
log = logging.getLogger("evigate.grpc")

# The one table: an error's code name -> the gRPC status code.
GRPC_CODES: dict[StatusCode, grpc.StatusCode] = {code: grpc.StatusCode[code.value] for code in StatusCode}


@dataclass
class InvalidArgumentError(EvigateError):
    """Bad input: one or more field violations; `reason` is the ErrorInfo reason."""

    status_code: ClassVar[StatusCode] = StatusCode.INVALID_ARGUMENT

    reason: str
    violations: Sequence[FieldViolation] = field(default_factory=tuple)

    def __str__(self) -> str:
        return "; ".join(f"{v.field}: {v.description}" for v in self.violations) or self.reason

    def status_message(self) -> str:
        return str(self)

    def error_info(self) -> tuple[str, dict[str, str]]:
        return self.reason, {}

    def field_violations(self) -> Sequence[FieldViolation]:
        return self.violations


@dataclass
class Unauthenticated(EvigateError):  # noqa: N818 - named after the status it maps to
    """No bearer token, or one that matches no configured token."""

    status_code: ClassVar[StatusCode] = StatusCode.UNAUTHENTICATED

    token_presented: bool

    def __str__(self) -> str:
        return "invalid bearer token" if self.token_presented else "missing bearer token"

    def status_message(self) -> str:
        return f"{self}; send `authorization: Bearer <token>`"

    def error_info(self) -> tuple[str, dict[str, str]]:
        return ("INVALID_TOKEN" if self.token_presented else "MISSING_TOKEN"), {"header": "authorization"}


class CallCancelled(EvigateError):  # noqa: N818 - named after the status it maps to
    """The call was cancelled (asyncio.CancelledError reaching the error mapping)."""

    status_code = StatusCode.CANCELLED
    rich_details = False

    def status_message(self) -> str:
        return "cancelled"


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


def _details(error: EvigateError) -> list[object]:
    """The error's details after ErrorInfo, built from its plain data."""
    details: list[object] = []
    violations = error.field_violations()
    if violations is not None:
        details.append(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                    for v in violations
                ]
            )
        )
    resource = error.resource()
    if resource is not None:
        details.append(
            error_details_pb2.ResourceInfo(
                resource_type=resource.resource_type, resource_name=resource.resource_name
            )
        )
    preconditions = error.precondition_violations()
    if preconditions is not None:
        details.append(
            error_details_pb2.PreconditionFailure(
                violations=[
                    error_details_pb2.PreconditionFailure.Violation(
                        type=v.type, subject=v.subject, description=v.description
                    )
                    for v in preconditions
                ]
            )
        )
    retry_after = error.retry_after_seconds()
    if retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(timedelta(seconds=max(retry_after, MIN_RETRY_DELAY_S)))
        details.append(retry)
    return details


def _domain_error(error: BaseException) -> EvigateError | None:
    """The evigate error an exception stands for: itself, or the two foreign ones asyncio raises."""
    if isinstance(error, EvigateError):
        return error
    if isinstance(error, TimeoutError):
        return DeadlineExceeded()
    if isinstance(error, asyncio.CancelledError):
        return CallCancelled()
    return None


def to_status(error: BaseException) -> RpcStatus:
    """The status an error maps to. INTERNAL ones (and unknown exceptions) are bugs, and logged."""
    domain = _domain_error(error)
    if domain is None or domain.status_code is StatusCode.INTERNAL:
        log.error("unexpected error", exc_info=error)
        domain = domain or EvigateError()
    code = GRPC_CODES[domain.status_code]
    message = domain.status_message()
    if not domain.rich_details:
        return RpcStatus(code, message)
    reason, metadata = domain.error_info()
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=dict(metadata))
    proto = status_pb2.Status(code=code.value[0], message=message, details=_pack(info, *_details(domain)))
    return RpcStatus(code, message, proto=proto)


def code_of(status_code: grpc.StatusCode) -> int:
    return int(status_code.value[0])


__all__ = [
    "DOMAIN",
    "GRPC_CODES",
    "CallCancelled",
    "FieldViolation",
    "InvalidArgumentError",
    "RpcStatus",
    "Unauthenticated",
    "to_status",
]
