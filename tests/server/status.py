"""Decoding google.rpc.Status details from a failed call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]


@dataclass
class Decoded:
    code: grpc.StatusCode
    message: str
    violations: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    domain: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    precondition: list[str] = field(default_factory=list)
    resource: str = ""


def decode(error: Any) -> Decoded:
    """From a grpc.aio.AioRpcError or a sync grpc.RpcError."""
    trailers = error.trailing_metadata() or ()
    out = Decoded(error.code(), error.details() or "")
    for key, value in trailers:
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        assert status.code == error.code().value[0]
        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                out.violations = {v.field: v.description for v in bad.field_violations}
            elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                out.reason, out.domain, out.metadata = info.reason, info.domain, dict(info.metadata)
            elif detail.Is(error_details_pb2.PreconditionFailure.DESCRIPTOR):
                failure = error_details_pb2.PreconditionFailure()
                detail.Unpack(failure)
                out.precondition = [v.type for v in failure.violations]
            elif detail.Is(error_details_pb2.ResourceInfo.DESCRIPTOR):
                resource = error_details_pb2.ResourceInfo()
                detail.Unpack(resource)
                out.resource = resource.resource_name
    return out
