"""A call's deadline, carried from the gRPC context into every tool, LLM and database call."""

from __future__ import annotations

import time
from dataclasses import dataclass

from evigate.rules.errors import EvigateError, StatusCode


class DeadlineExceeded(EvigateError):  # noqa: N818 (reads as the event, like TimeoutError)
    """The call's deadline passed before the work finished: a bare DEADLINE_EXCEEDED status."""

    status_code = StatusCode.DEADLINE_EXCEEDED
    rich_details = False

    def status_message(self) -> str:
        return "deadline exceeded"


@dataclass(frozen=True)
class Deadline:
    """An absolute point on the monotonic clock; `None` seconds means no deadline."""

    at: float | None

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        return cls(None if seconds is None else time.monotonic() + seconds)

    @classmethod
    def none(cls) -> Deadline:
        return cls(None)

    def remaining(self) -> float | None:
        """Seconds left (never negative), or None without a deadline."""
        if self.at is None:
            return None
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def check(self) -> None:
        if self.expired():
            raise DeadlineExceeded("deadline exceeded")

    def cap(self, seconds: float) -> float:
        """The smaller of `seconds` and the time left: the timeout to give one sub-call."""
        left = self.remaining()
        return seconds if left is None else min(seconds, left)
