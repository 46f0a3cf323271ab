"""What changed in a service's logs at a moment: templates new since then, and templates whose rate
rose or fell across it. Each change holds both counts, both rates and both spans, so "X appeared
at 10:02 and was never seen in the hours before" or "Y went from 3/h before 10:00 to 240/h after"
is cited from one piece of evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

RATIO = 2.0  # a rate that at least doubles (or halves) across the moment has changed
MIN_EVENTS = 3  # fewer events on both sides together say nothing about a rate
_ORDER = {"new": 0, "rose": 1, "gone": 2, "fell": 3, "steady": 4}


@dataclass(frozen=True)
class Change:
    kind: str  # new | rose | fell | gone | steady
    at: datetime  # the moment compared across
    start: datetime  # the span before it starts here
    end: datetime  # the span after it ends here
    before: int
    after: int

    @property
    def before_rate(self) -> float:
        return self.before / _hours(self.start, self.at)

    @property
    def after_rate(self) -> float:
        return self.after / _hours(self.at, self.end)

    def magnitude(self) -> float:
        low, high = sorted((self.before_rate, self.after_rate))
        return high / low if low else float("inf")

    def sort_key(self) -> tuple[int, float]:
        return _ORDER[self.kind], -min(self.magnitude(), 1e12)

    def text(self) -> str:
        return (
            f"change={self.kind} before={self.before} from {_clock(self.start)} to {_clock(self.at)} "
            f"({self.before_rate:.1f}/h) after={self.after} from {_clock(self.at)} to {_clock(self.end)} "
            f"({self.after_rate:.1f}/h)"
        )


def change(moments: Sequence[datetime], at: datetime, start: datetime, end: datetime) -> Change:
    """How one template's events fall on either side of `at`, within start..end."""
    before = sum(1 for m in moments if m < at)
    after = len(moments) - before
    kind = "steady"
    if before == 0 and after:
        kind = "new"
    elif after == 0 and before:
        kind = "gone"
    elif before + after >= MIN_EVENTS:
        probe = Change("steady", at, start, end, before, after)
        if probe.after_rate >= RATIO * probe.before_rate:
            kind = "rose"
        elif probe.before_rate >= RATIO * probe.after_rate:
            kind = "fell"
    return Change(kind, at, start, end, before, after)


def _hours(start: datetime, end: datetime) -> float:
    return max((end - start).total_seconds() / 3600, 1 / 60)  # at least a minute: no division by zero


def _clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
