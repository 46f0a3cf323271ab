"""The one error hierarchy (docs/design.md §3.4): every error class of the tree is an EvigateError
whose code the one table maps, and the table's builder gives each kind its detail."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import re

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

import evigate.rules
import evigate.server
import evigate.storage
from evigate.rules.errors import EvigateError, StatusCode
from evigate.server.grpc.errors import DETAILS_KEY, GRPC_CODES, to_status
from evigate.storage.errors import DatabaseUnavailable, SessionNotFound

REASON = re.compile(r"[A-Z][A-Z0-9_]*")


def _all_subclasses(cls: type[EvigateError]) -> set[type[EvigateError]]:
    found: set[type[EvigateError]] = set()
    for sub in cls.__subclasses__():
        found |= {sub, *_all_subclasses(sub)}
    return found


def _import_tree() -> None:
    for package in (evigate.rules, evigate.storage, evigate.server):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if ".demo" in module.name or module.name.endswith("__main__"):
                continue
            importlib.import_module(module.name)


def test_every_status_code_name_is_a_grpc_code() -> None:
    assert {code.name for code in GRPC_CODES.values()} == {c.value for c in StatusCode}


def test_every_error_class_of_the_tree_is_mapped() -> None:
    _import_tree()
    classes = _all_subclasses(EvigateError)
    assert len(classes) >= 20  # storage, codec, config, tools, sources, agents, llm, cli, grpc, ...
    for cls in classes:
        assert cls.status_code in GRPC_CODES, cls
        assert REASON.fullmatch(cls.error_reason), cls


def _details(status: grpc.StatusCode, error: BaseException) -> status_pb2.Status:
    rpc = to_status(error)
    assert rpc.code is status
    (key, raw), *_ = rpc.trailing_metadata()
    assert key == DETAILS_KEY
    return status_pb2.Status.FromString(raw)


def test_a_session_error_carries_its_reason_metadata_and_resource() -> None:
    proto = _details(grpc.StatusCode.NOT_FOUND, SessionNotFound("s-1"))
    info, resource = error_details_pb2.ErrorInfo(), error_details_pb2.ResourceInfo()
    assert proto.details[0].Unpack(info) and proto.details[1].Unpack(resource)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "SESSION_NOT_FOUND",
        "evigate",
        {"session_id": "s-1"},
    )
    assert (resource.resource_type, resource.resource_name) == ("evigate.v1.DiagnosisSession", "s-1")
    assert proto.message == "session 's-1' not found"


def test_retry_advice_is_never_below_a_tenth_of_a_second() -> None:
    proto = _details(grpc.StatusCode.UNAVAILABLE, DatabaseUnavailable(retry_after_s=0.0))
    retry = error_details_pb2.RetryInfo()
    assert proto.details[1].Unpack(retry)
    assert retry.retry_delay.ToMilliseconds() == 100


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (TimeoutError(), grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded"),
        (asyncio.CancelledError(), grpc.StatusCode.CANCELLED, "cancelled"),
    ],
)
def test_foreign_timeouts_and_cancellations_are_bare_statuses(
    error: BaseException, code: grpc.StatusCode, message: str
) -> None:
    rpc = to_status(error)
    assert (rpc.code, rpc.message, rpc.proto) == (code, message, None)


def test_an_error_that_does_not_say_otherwise_is_internal_without_its_text() -> None:
    rpc = to_status(EvigateError("secret table name"))
    assert (rpc.code, rpc.message) == (grpc.StatusCode.INTERNAL, "internal error")
    rpc = to_status(KeyError("bug"))
    assert (rpc.code, rpc.message) == (grpc.StatusCode.INTERNAL, "internal error")
