"""Hostile clients through a real channel to a server process: every RPC with random, malformed and
oversized messages, unknown enum numbers, empty and huge session ids, SQL meta-characters, raw
bytes, and invalid UTF-8 in metadata. Only documented status codes come back (never INTERNAL or
UNKNOWN from the service), and the server stays healthy with its tables intact."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    evidence_pb2,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from tests.fuzz.raw_h2 import raw_unary
from tests.reliability.procs import QUESTIONS, ServerProc, db_rows

TOKEN = "fuzz-token"
DOCUMENTED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.RESOURCE_EXHAUSTED,  # larger than max_request_bytes, or max_concurrent_rpcs
    grpc.StatusCode.UNAUTHENTICATED,  # the auth-on server
}
DOCUMENTED_NUMBERS = {code.value[0] for code in DOCUMENTED}
METHODS = (
    "/evigate.v1.ChatService/Chat",
    "/evigate.v1.FeedbackService/SubmitFeedback",
    "/evigate.v1.TraceService/GetTrace",
    "/evigate.v1.TraceService/ListSessions",
    "/evigate.v1.GatekeeperService/Check",
)
SQL = (
    "'; DROP TABLE diagnosis_session; --",
    '" OR 1=1 --',
    "a' OR 'a'='a",
    "%' AND SLEEP(5) --",
    "\\x00\\'",
    "`case_library`",
    "1; DELETE FROM job",
    "_%",
)
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
# Any text protobuf can carry (no lone surrogates), biased towards hostile shapes.
texts = st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=300),
    st.sampled_from(SQL),
    st.builds(lambda s, q: s + q, st.text(max_size=20), st.sampled_from(SQL)),
    st.just(""),
    st.builds(lambda n: "x" * n, st.integers(min_value=100, max_value=20_000)),
)
session_ids = st.one_of(
    texts,
    st.from_regex(r"\A[A-Za-z0-9._:-]{1,128}\Z"),
    st.builds(lambda n: "s" * n, st.sampled_from([0, 1, 128, 129, 4096, 100_000])),
)


def _start(tmp: Path, name: str, env: dict[str, str] | None = None) -> Iterator[ServerProc]:
    proc = ServerProc(tmp / name, f"sqlite+aiosqlite:///{tmp / (name + '.db')}", name=name, env=env)
    proc.start()
    try:
        asyncio.run(proc.wait_ready())
        yield proc
    finally:
        proc.stop()
        if proc.proc is not None and proc.proc.poll() is None:
            proc.proc.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    yield from _start(tmp_path_factory.mktemp("fuzz"), "open")


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    yield from _start(tmp_path_factory.mktemp("fuzz-auth"), "auth", {"EVIGATE_AUTH_TOKENS": TOKEN})


@pytest.fixture(scope="module")
def channel(server: ServerProc) -> Iterator[grpc.Channel]:
    options = [("grpc.max_send_message_length", 64 * 1024 * 1024)]
    with grpc.insecure_channel(server.address, options=options) as ch:
        yield ch


def _code(call: object, *args: object, **kwargs: object) -> grpc.StatusCode:
    try:
        call(*args, timeout=30, **kwargs)  # type: ignore[operator]
    except grpc.RpcError as error:
        return error.code()
    return grpc.StatusCode.OK


def _assert_documented(code: grpc.StatusCode, what: object) -> None:
    assert code in DOCUMENTED, (code, what)


@FUZZ
@given(query=texts, session_id=session_ids, language=st.one_of(st.sampled_from(["", "zh", "en"]), texts))
def test_chat(channel: grpc.Channel, query: str, session_id: str, language: str) -> None:
    stub = chat_service_pb2_grpc.ChatServiceStub(channel)
    request = chat_service_pb2.ChatRequest(query=query, session_id=session_id, language=language)
    _assert_documented(_code(stub.Chat, request), request)


@settings(FUZZ, max_examples=30)
@given(query=st.one_of(texts, st.sampled_from(QUESTIONS)), session_id=session_ids)
def test_stream_chat(channel: grpc.Channel, query: str, session_id: str) -> None:
    stub = chat_service_pb2_grpc.ChatServiceStub(channel)
    request = chat_service_pb2.StreamChatRequest(query=query, session_id=session_id)

    def consume(req: object, timeout: float) -> None:
        for _ in stub.StreamChat(req, timeout=timeout):
            pass

    _assert_documented(_code(consume, request), request)


@FUZZ
@given(session_id=session_ids, feedback=st.one_of(int32, st.sampled_from([0, 1, 2, 3, -1])))
def test_submit_feedback(channel: grpc.Channel, session_id: str, feedback: int) -> None:
    stub = feedback_service_pb2_grpc.FeedbackServiceStub(channel)
    request = feedback_service_pb2.SubmitFeedbackRequest(session_id=session_id, feedback=feedback)  # type: ignore[arg-type]
    _assert_documented(_code(stub.SubmitFeedback, request), request)


@FUZZ
@given(session_id=session_ids)
def test_get_trace(channel: grpc.Channel, session_id: str) -> None:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    request = trace_service_pb2.GetTraceRequest(session_id=session_id)
    _assert_documented(_code(stub.GetTrace, request), request)


@FUZZ
@given(feedback=int32, status=int32, page_size=int32, page_token=texts)
def test_list_sessions(
    channel: grpc.Channel, feedback: int, status: int, page_size: int, page_token: str
) -> None:
    stub = trace_service_pb2_grpc.TraceServiceStub(channel)
    request = trace_service_pb2.ListSessionsRequest(
        feedback=feedback,  # type: ignore[arg-type]
        status=status,  # type: ignore[arg-type]
        page_size=page_size,
        page_token=page_token,
    )
    _assert_documented(_code(stub.ListSessions, request), request)


bindings = st.builds(
    evidence_pb2.EvidenceBinding,
    source_type=texts,
    source_id=texts,
    tool_name=st.one_of(st.sampled_from(["query_metrics", "query_logs", "lookup_knowledge"]), texts),
    source_invocation_id=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    raw_path=st.one_of(
        st.sampled_from(["$.alerts[0]", "$.logs[99999999999]", "$.no_evidence", "$..*"]), texts
    ),
    evidence_excerpt=texts,
)
claims = st.builds(
    evidence_pb2.Claim,
    claim_id=texts,
    claim_type=int32,
    claim_text=texts,
    support_level=int32,
    evidence_bindings=st.lists(bindings, max_size=4),
)


@FUZZ
@given(
    session_id=session_ids,
    answer_version=texts,
    claim_list=st.lists(claims, max_size=6),
    missing=st.lists(texts, max_size=3),
    present=st.booleans(),
)
def test_gatekeeper_check(
    channel: grpc.Channel,
    *,
    session_id: str,
    answer_version: str,
    claim_list: list[evidence_pb2.Claim],
    missing: list[str],
    present: bool,
) -> None:
    stub = gatekeeper_service_pb2_grpc.GatekeeperServiceStub(channel)
    evidence = evidence_pb2.ExecutorEvidence(
        answer_version=answer_version, claims=claim_list, missing_info=missing
    )
    request = gatekeeper_service_pb2.CheckRequest(
        session_id=session_id, evidence=evidence if present else None
    )
    _assert_documented(_code(stub.Check, request), request)


@settings(FUZZ, max_examples=250)
@given(method=st.sampled_from(METHODS), body=st.binary(max_size=2048))
def test_raw_bytes_to_every_method(channel: grpc.Channel, method: str, body: bytes) -> None:
    """Arbitrary bytes as the request message, through a generic unary call."""
    call = channel.unary_unary(method)
    _assert_documented(_code(call, body), (method, body))


@settings(FUZZ, max_examples=100)
@given(
    method=st.sampled_from(METHODS),
    value=st.binary(min_size=1, max_size=64).filter(lambda b: b"\r" not in b and b"\n" not in b),
    key=st.sampled_from([b"authorization", b"x-request-id", b"user-agent-extra", b"x-evigate-session"]),
)
def test_invalid_utf8_in_metadata(auth_server: ServerProc, method: str, value: bytes, key: bytes) -> None:
    """Header values grpcio would refuse to send (invalid UTF-8, control bytes), over raw HTTP/2, to
    a server with auth on: never INTERNAL/UNKNOWN; a bad token is UNAUTHENTICATED."""
    reply = raw_unary(auth_server.address, method, b"", [(key, value)])
    assert reply.grpc_status in DOCUMENTED_NUMBERS or (reply.grpc_status is None and reply.reset), reply
    if key == b"authorization":
        assert reply.grpc_status == grpc.StatusCode.UNAUTHENTICATED.value[0], reply
    good = raw_unary(
        auth_server.address, method, b"", [(b"authorization", f"Bearer {TOKEN}".encode()), (key, value)]
    )
    assert good.grpc_status in DOCUMENTED_NUMBERS - {grpc.StatusCode.UNAUTHENTICATED.value[0]} or (
        key == b"authorization"
    ), good


@pytest.mark.parametrize(
    "header",
    [(b"x-evil-bin", b"!!not base64\xff"), (b"grpc-timeout", b"\xff"), (b"\xff\xfe", b"v")],
)
def test_malformed_transport_headers_are_refused_by_grpc_core_before_any_handler(
    auth_server: ServerProc, header: tuple[bytes, bytes]
) -> None:
    """Not metadata but HTTP/2-level garbage (undecodable -bin value, unparsable grpc-timeout, an
    illegal header name): grpcio's C core answers INTERNAL itself, before interceptors or handlers
    run; nothing of ours can map it. What we can promise: no handler ran and the server is fine."""
    reply = raw_unary(auth_server.address, METHODS[2], b"", [header])
    assert reply.grpc_status == grpc.StatusCode.INTERNAL.value[0]
    message = reply.headers.get(b"grpc-message", b"")
    assert b"metadata" in message or b"Illegal header" in message, reply
    assert not [
        e for e in auth_server.log_events() if e.get("rpc") == METHODS[2] and e.get("code") == "INTERNAL"
    ]


def test_oversized_messages(channel: grpc.Channel) -> None:
    chat = chat_service_pb2_grpc.ChatServiceStub(channel)
    too_long = chat_service_pb2.ChatRequest(query="x" * 4001)
    assert _code(chat.Chat, too_long) == grpc.StatusCode.INVALID_ARGUMENT  # max_query_chars
    huge = chat_service_pb2.ChatRequest(query="x" * (5 * 1024 * 1024))
    assert _code(chat.Chat, huge) == grpc.StatusCode.RESOURCE_EXHAUSTED  # max_request_bytes
    trace = trace_service_pb2_grpc.TraceServiceStub(channel)
    assert _code(trace.GetTrace, trace_service_pb2.GetTraceRequest(session_id="s" * 200_000)) == (
        grpc.StatusCode.INVALID_ARGUMENT
    )
    assert _code(trace.GetTrace, trace_service_pb2.GetTraceRequest(session_id="s" * 1_000_000)) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED  # over max_request_bytes (256 KiB)
    )


def test_the_server_is_healthy_and_its_tables_intact_after_the_fuzzing(
    server: ServerProc, auth_server: ServerProc, channel: grpc.Channel
) -> None:
    """Runs last in this module (pytest keeps file order)."""
    health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    reply = chat_service_pb2_grpc.ChatServiceStub(channel).Chat(
        chat_service_pb2.ChatRequest(query=QUESTIONS[0]), timeout=30
    )
    assert reply.status == 2  # SUCCESS
    for table in ("diagnosis_session", "tool_invocation", "case_library", "job"):
        assert db_rows(server.database_url, f"SELECT COUNT(*) FROM {table}")[0][0] >= 0
    for proc in (server, auth_server):
        assert proc.proc is not None and proc.proc.poll() is None
        unexpected = [e for e in proc.log_events() if e.get("event") == "unexpected error"]
        assert not unexpected, unexpected[:3]
