"""The four evigate.v1 services. They translate proto ⇄ domain and nothing else: validation is in
server.grpc.validation, conversion in server.grpc.convert, error mapping in server.grpc.errors
(applied by the call interceptor to whatever a handler raises)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator

import grpc
from evigate.v1 import (
    chat_service_pb2,
    chat_service_pb2_grpc,
    feedback_service_pb2,
    feedback_service_pb2_grpc,
    gatekeeper_pb2,
    gatekeeper_service_pb2,
    gatekeeper_service_pb2_grpc,
    trace_service_pb2,
    trace_service_pb2_grpc,
)

from rules.catalog import Catalog
from server.codec import from_seed
from server.deadline import Deadline, DeadlineExceeded
from server.gatecheck import check_session_evidence
from server.grpc import convert, validation
from server.grpc.metrics import Metrics
from server.grpc.trace_cache import TraceCache
from server.pipeline import ChatResult, Pipeline, StageEvent
from storage.errors import SessionNotFound
from storage.repository import Repository

log = logging.getLogger("evigate.grpc")
FEEDBACK_RECORDED = "反馈已记录"


DEADLINE_MARGIN_S = 0.1
MIN_DEADLINE_MARGIN_S = 0.02
# A SUCCESS handed over with less than this left on the caller's deadline could arrive too late;
# it is recorded FAILED and answered DEADLINE_EXCEEDED instead, so both sides agree.
REPLY_BUDGET_S = 0.01


def deadline_of(context: grpc.aio.ServicerContext) -> Deadline:
    """The client's deadline, carried into every tool, LLM and database call of the pipeline.

    The pipeline gets a little less than the client (a tenth, between 20 and 100 ms) so that it
    times out first and records the session as FAILED before gRPC cancels the call, and so that a
    SUCCESS leaves time for the reply."""
    remaining = context.time_remaining()
    if remaining is None:
        return Deadline.none()
    margin = min(DEADLINE_MARGIN_S, max(remaining / 10, MIN_DEADLINE_MARGIN_S))
    return Deadline.after(max(0.0, remaining - margin))


class ChatServicer(chat_service_pb2_grpc.ChatServiceServicer):
    def __init__(
        self, pipeline: Pipeline, repo: Repository, limits: validation.Limits, metrics: Metrics
    ) -> None:
        self._pipeline = pipeline
        self._repo = repo
        self._limits = limits
        self._metrics = metrics
        self._observing: set[asyncio.Task[None]] = set()  # stage-latency reads, off the reply path

    async def _events(
        self, query: str, session_id: str, language: str, context: grpc.aio.ServicerContext
    ) -> AsyncGenerator[tuple[StageEvent, bool], None]:
        """The pipeline's events, each with whether this call ran the session (False for the stored
        result of a finished session)."""
        validation.chat(query, session_id, language, self._limits)
        ran = False
        deadline = deadline_of(context)
        async for event in self._pipeline.stream(query, session_id or None, language or "zh", deadline):
            if event.kind != "result":
                ran = True
                self._metrics.observe_event(event.kind, event.data)
            elif isinstance(event.data, ChatResult):
                result = event.data
                if ran:
                    task = asyncio.create_task(self._observe_finished(result))
                    self._observing.add(task)
                    task.add_done_callback(self._observing.discard)
                if result.status == "FAILED" and deadline.expired():
                    # Recorded as FAILED; the caller's deadline is what ended it.
                    raise DeadlineExceeded(result.failure_reason)
            yield event, ran

    async def _deliverable(self, session_id: str, context: grpc.aio.ServicerContext) -> None:
        """Counts a SUCCESS that can still reach the caller; else records it FAILED and raises
        DeadlineExceeded, which is what the caller will see (the pipeline counts FAILED ones).
        Called with the reply built, right before it is handed to gRPC: on success nothing awaits
        between this check and the send, so no other task can delay the reply past the check."""
        remaining = context.time_remaining()
        if remaining is not None and remaining < REPLY_BUDGET_S:
            await self._pipeline.fail_undelivered(session_id)
            raise DeadlineExceeded("deadline exceeded before the answer could be sent")
        self._metrics.sessions.labels("SUCCESS", "ok").inc()

    async def _observe_finished(self, result: ChatResult) -> None:
        try:
            session = await self._repo.get_session(result.session_id)
        except Exception:  # metrics never fail a call
            log.warning("stage latencies unavailable", extra={"session_id": result.session_id})
            return
        if session is not None and session.extras:
            self._metrics.observe_stage_latencies(session.extras.get("stage_latencies") or [])

    async def Chat(  # noqa: N802 - generated method name
        self, request: chat_service_pb2.ChatRequest, context: grpc.aio.ServicerContext
    ) -> chat_service_pb2.ChatResponse:
        result, fresh = None, False
        events = self._events(request.query, request.session_id, request.language, context)
        async with contextlib.aclosing(events):
            async for event, ran in events:
                if isinstance(event.data, ChatResult):
                    result, fresh = event.data, ran
                    break
        if result is None:
            raise RuntimeError("the pipeline ended without a result")
        response = convert.chat_response(result)
        if fresh and result.status == "SUCCESS":
            await self._deliverable(result.session_id, context)
        return response

    async def StreamChat(  # noqa: N802
        self, request: chat_service_pb2.StreamChatRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[chat_service_pb2.StreamChatResponse]:
        async for event, fresh in self._events(request.query, request.session_id, request.language, context):
            message = convert.stream_event(event)
            if fresh and isinstance(event.data, ChatResult) and event.data.status == "SUCCESS":
                await self._deliverable(event.data.session_id, context)
            yield message


class FeedbackServicer(feedback_service_pb2_grpc.FeedbackServiceServicer):
    def __init__(self, repo: Repository, traces: TraceCache) -> None:
        self._repo = repo
        self._traces = traces

    async def SubmitFeedback(  # noqa: N802
        self, request: feedback_service_pb2.SubmitFeedbackRequest, context: grpc.aio.ServicerContext
    ) -> feedback_service_pb2.SubmitFeedbackResponse:
        session_id = request.session_id  # each read of a proto string field builds a new str
        word = validation.feedback_request(session_id, request.feedback)
        try:
            outcome = await self._repo.submit_feedback(session_id, word)
        finally:
            self._traces.invalidate(session_id)
        return feedback_service_pb2.SubmitFeedbackResponse(
            success=True, message=FEEDBACK_RECORDED, case_id=outcome.case_id or ""
        )


class TraceServicer(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, repo: Repository, traces: TraceCache) -> None:
        self._repo = repo
        self._traces = traces

    async def GetTrace(  # noqa: N802
        self, request: trace_service_pb2.GetTraceRequest, context: grpc.aio.ServicerContext
    ) -> trace_service_pb2.GetTraceResponse:
        session_id = request.session_id
        validation.require("INVALID_TRACE_REQUEST", validation.session_id(session_id))

        async def load() -> tuple[trace_service_pb2.GetTraceResponse, bool]:
            record = await self._repo.get_trace(session_id)
            if record is None:
                raise SessionNotFound(session_id)
            return trace_service_pb2.GetTraceResponse(trace=convert.trace(record)), (
                record.session.status != "RUNNING"
            )

        return await self._traces.get_or_load(session_id, load)

    async def ListSessions(  # noqa: N802
        self, request: trace_service_pb2.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> trace_service_pb2.ListSessionsResponse:
        feedback, status, size, token = validation.list_request(
            request.feedback, request.status, request.page_size, request.page_token
        )
        sessions, next_token = await self._repo.list_sessions(feedback, status, size, token)
        return trace_service_pb2.ListSessionsResponse(
            sessions=[convert.diagnosis_session(s) for s in sessions], next_page_token=next_token or ""
        )


class GatekeeperServicer(gatekeeper_service_pb2_grpc.GatekeeperServiceServicer):
    def __init__(self, repo: Repository, catalog: Catalog, limits: validation.Limits) -> None:
        self._repo = repo
        self._catalog = catalog
        self._limits = limits

    async def Check(  # noqa: N802
        self, request: gatekeeper_service_pb2.CheckRequest, context: grpc.aio.ServicerContext
    ) -> gatekeeper_service_pb2.CheckResponse:
        evidence = validation.check_request(
            request.session_id, request.evidence, request.HasField("evidence"), self._limits
        )
        result = await check_session_evidence(self._repo, self._catalog, request.session_id, evidence)
        return gatekeeper_service_pb2.CheckResponse(result=from_seed(gatekeeper_pb2.GatekeeperResult, result))
