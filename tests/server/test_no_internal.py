"""Property: nothing a client sends produces INTERNAL (or UNKNOWN). Arbitrary field values and
arbitrary request bytes go to every RPC of a served process."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.v1 import (
    chat_service_pb2,
    evidence_pb2,
    feedback_service_pb2,
    gatekeeper_service_pb2,
    trace_service_pb2,
)
from tests.server.conftest import SHARED_TOKEN, ServerProcess

BAD_CODES = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
METHODS = (
    "/evigate.v1.ChatService/Chat",
    "/evigate.v1.ChatService/StreamChat",
    "/evigate.v1.FeedbackService/SubmitFeedback",
    "/evigate.v1.TraceService/GetTrace",
    "/evigate.v1.TraceService/ListSessions",
    "/evigate.v1.GatekeeperService/Check",
)
METADATA = (("authorization", f"Bearer {SHARED_TOKEN}"),)
PROPERTY = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", " ", "zh", "en", "a" * 64, "a" * 65, "x:y.z-1_2", "../etc", "\x00", "payment-service"]
    ),
)
ints = st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from([0, 1, 2, 3, 500, 501, -1]))


@pytest.fixture(scope="module")
def channel(shared_server: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(shared_server.address) as ch:
        yield ch


def _call(channel: grpc.Channel, method: str, payload: bytes) -> grpc.StatusCode:
    streaming = method.endswith("StreamChat")
    if streaming:
        stream = channel.unary_stream(method)
        try:
            for _ in stream(payload, metadata=METADATA, timeout=30):
                pass
        except grpc.RpcError as error:
            return error.code()
        return grpc.StatusCode.OK
    unary = channel.unary_unary(method)
    try:
        unary(payload, metadata=METADATA, timeout=30)
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


@PROPERTY
@given(method=st.sampled_from(METHODS), payload=st.binary(max_size=64))
def test_arbitrary_bytes(channel: grpc.Channel, method: str, payload: bytes) -> None:
    assert _call(channel, method, payload) not in BAD_CODES


@PROPERTY
@given(query=texts, session_id=texts, language=texts)
def test_chat_fields(channel: grpc.Channel, query: str, session_id: str, language: str) -> None:
    request = chat_service_pb2.ChatRequest(query=query, session_id=session_id, language=language)
    assert _call(channel, METHODS[0], request.SerializeToString()) not in BAD_CODES


@PROPERTY
@given(session_id=texts, feedback=ints, page_size=ints, token=texts)
def test_feedback_and_trace_fields(
    channel: grpc.Channel, session_id: str, feedback: int, page_size: int, token: str
) -> None:
    requests = [
        (METHODS[2], feedback_service_pb2.SubmitFeedbackRequest(session_id=session_id, feedback=feedback)),  # type: ignore[arg-type]
        (METHODS[3], trace_service_pb2.GetTraceRequest(session_id=session_id)),
        (
            METHODS[4],
            trace_service_pb2.ListSessionsRequest(
                feedback=feedback,  # type: ignore[arg-type]
                status=feedback,  # type: ignore[arg-type]
                page_size=page_size,
                page_token=token,
            ),
        ),
    ]
    for method, request in requests:
        assert _call(channel, method, request.SerializeToString()) not in BAD_CODES


@PROPERTY
@given(
    session_id=texts,
    version=texts,
    claim_type=ints,
    path=texts,
    excerpt=texts,
    invocation=st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
)
def test_check_fields(
    channel: grpc.Channel,
    *,
    session_id: str,
    version: str,
    claim_type: int,
    path: str,
    excerpt: str,
    invocation: int | None,
) -> None:
    evidence = evidence_pb2.ExecutorEvidence(answer_version=version)
    claim = evidence.claims.add(claim_id=excerpt[:8], claim_type=claim_type)
    binding = claim.evidence_bindings.add(tool_name=path, raw_path=path, evidence_excerpt=excerpt)
    if invocation is not None:
        binding.source_invocation_id = invocation
    request = gatekeeper_service_pb2.CheckRequest(session_id=session_id, evidence=evidence)
    assert _call(channel, METHODS[5], request.SerializeToString()) not in BAD_CODES
