"""Chat and StreamChat: run one question through the pipeline.

A session with a client-chosen id that already finished returns its stored result; one still
running is refused (SessionRunning). The deadline rule (docs/design.md §2.7): a session that ends
FAILED because the caller's deadline ran out raises DeadlineExceeded after it is recorded, and a
SUCCESS that can no longer reach the caller in time (`deliver`) is recorded FAILED and raises it
too, so the caller and the record always agree. The observer (metrics) hears every stage event,
each session that ran here, and each SUCCESS delivered."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

from evigate.rules.enums import SessionStatus
from evigate.rules.language import answer_language
from evigate.server.deadline import Deadline, DeadlineExceeded
from evigate.server.pipeline import ChatResult, Pipeline, StageEvent
from evigate.server.usecases.ports import ChatObserver

# A SUCCESS handed over with less than this left on the caller's deadline could arrive too late; it
# is recorded FAILED and answered DEADLINE_EXCEEDED instead.
REPLY_BUDGET_S = 0.01


@dataclass(frozen=True)
class ChatInput:
    query: str
    session_id: str | None  # None: the pipeline picks one
    language: str  # "zh" | "en"; empty: the question's, by script (rules.language)
    deadline: Deadline


@dataclass(frozen=True)
class ChatOutcome:
    result: ChatResult
    ran_here: bool  # False for the stored result of a session that had already finished


@dataclass(frozen=True)
class ChatEvent:
    stage: StageEvent
    outcome: ChatOutcome | None = None  # set on the final `result` event


class ChatUseCase:
    def __init__(self, pipeline: Pipeline, observer: ChatObserver | None = None) -> None:
        self._pipeline = pipeline
        self._observer = observer

    async def events(self, request: ChatInput) -> AsyncGenerator[ChatEvent, None]:
        """Each stage event as it happens, ending with the `result` event (StreamChat)."""
        ran = False
        language = answer_language(request.language, request.query)
        stream = self._pipeline.stream(request.query, request.session_id, language, request.deadline)
        async for event in stream:
            if event.kind != "result":
                ran = True
                if self._observer is not None:
                    self._observer.on_event(event.kind, event.data)
                yield ChatEvent(event)
            elif isinstance(event.data, ChatResult):
                result = event.data
                if ran and self._observer is not None:
                    self._observer.on_finished(result.status, result.stage_latencies, result.answer_check)
                if result.status == SessionStatus.FAILED and request.deadline.expired():
                    # Recorded as FAILED; the caller's deadline is what ended it.
                    raise DeadlineExceeded(result.failure_reason)
                yield ChatEvent(event, ChatOutcome(result, ran))

    async def run(self, request: ChatInput) -> ChatOutcome:
        """The session's outcome (Chat)."""
        async for event in self.events(request):
            if event.outcome is not None:
                return event.outcome
        raise RuntimeError("the pipeline ended without a result")

    async def deliver(self, outcome: ChatOutcome, time_remaining: float | None) -> None:
        """Call with the reply built, right before handing it over: a SUCCESS that ran here is
        counted as delivered, or — with less than REPLY_BUDGET_S of the caller's deadline left —
        recorded FAILED, raising DeadlineExceeded (what the caller will see). On success nothing
        awaits, so no other task can delay the reply past this check."""
        result = outcome.result
        if not outcome.ran_here or result.status != SessionStatus.SUCCESS:
            return
        if time_remaining is not None and time_remaining < REPLY_BUDGET_S:
            await self._pipeline.fail_undelivered(result.session_id)
            raise DeadlineExceeded("deadline exceeded before the answer could be sent")
        if self._observer is not None:
            self._observer.on_delivered(result.session_id)
