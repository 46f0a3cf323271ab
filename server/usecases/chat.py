"""Chat and StreamChat: run one question through the pipeline.

A session with a client-chosen id that already finished returns its stored result; one still
running is refused (SessionRunning). A session that ends FAILED because the caller's deadline ran
out raises DeadlineExceeded after it is recorded, so the caller sees the deadline, not a FAILED
answer. The observer (metrics) hears every stage event and each session that ran here."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

from server.deadline import Deadline, DeadlineExceeded
from server.pipeline import ChatResult, Pipeline, StageEvent
from server.usecases.ports import ChatObserver


@dataclass(frozen=True)
class ChatInput:
    query: str
    session_id: str | None  # None: the pipeline picks one
    language: str  # "zh" | "en"
    deadline: Deadline


class ChatUseCase:
    def __init__(self, pipeline: Pipeline, observer: ChatObserver | None = None) -> None:
        self._pipeline = pipeline
        self._observer = observer

    async def events(self, request: ChatInput) -> AsyncGenerator[StageEvent, None]:
        """Each stage event as it happens, ending with the `result` event (StreamChat)."""
        ran = False
        stream = self._pipeline.stream(request.query, request.session_id, request.language, request.deadline)
        async for event in stream:
            if event.kind != "result":
                ran = True
                if self._observer is not None:
                    self._observer.on_event(event.kind, event.data)
            elif isinstance(event.data, ChatResult):
                result = event.data
                if ran and self._observer is not None:
                    self._observer.on_finished(result.status, result.stage_latencies, result.answer_check)
                if result.status == "FAILED" and request.deadline.expired():
                    # Recorded as FAILED; the caller's deadline is what ended it.
                    raise DeadlineExceeded(result.failure_reason)
            yield event

    async def run(self, request: ChatInput) -> ChatResult:
        """The session's result (Chat)."""
        async for event in self.events(request):
            if isinstance(event.data, ChatResult):
                return event.data
        raise RuntimeError("the pipeline ended without a result")
