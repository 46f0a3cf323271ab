"""The waterfall of a session: each stage (from the recorded stage latencies) and each tool call
on one time axis, as rows with an offset and a width for the SVG in the session template.

Stages are recorded as durations in the order they ran, so they are laid end to end from the
session's start. Tool calls carry wall-clock times (their row's time, when each ended, minus its
latency); they are placed relative to the first call, which starts where the first executor stage
starts — the durations of the stages leave out the bookkeeping between them, so the session's own
creation time would put the calls late."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

WIDTH = 1000  # SVG user units of the time axis
LABEL_WIDTH = 230
ROW_HEIGHT = 18


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    kind: str  # "stage" | "call" | "failed"
    start_ms: float
    duration_ms: float
    href: str  # the row's details on the page ("" for none)
    x: float = 0.0
    width: float = 0.0
    y: int = 0


@dataclass(frozen=True, slots=True)
class Timeline:
    bars: list[Bar]
    total_ms: float
    height: int
    width: int = LABEL_WIDTH + WIDTH + 90
    label_width: int = LABEL_WIDTH


def _ms(later: datetime, earlier: datetime) -> float:
    return (later - earlier).total_seconds() * 1000


def build(stage_latencies: Sequence[Any], calls: Sequence[Any], started: datetime) -> Timeline:
    """stage_latencies: the session's `{stage, round, latency_ms}` dicts; calls: InvocationRecords."""
    rows: list[Bar] = []
    offset = 0.0
    executor_start: float | None = None
    for entry in stage_latencies:
        if not isinstance(entry, dict):
            continue
        duration = float(entry.get("latency_ms") or 0.0)
        stage = str(entry.get("stage") or "?")
        round_no = entry.get("round") or 0
        label = f"{stage} (round {round_no})" if round_no else stage
        if stage == "executor" and executor_start is None:
            executor_start = offset
        href = f"#round-{round_no}" if round_no else ("#plan" if stage == "planner" else "#answer")
        rows.append(Bar(label, "stage", offset, duration, href))
        offset += duration
    starts = [_ms(c.created_at, started) - float(c.latency_ms or 0.0) for c in calls]
    first = min(starts, default=0.0)
    anchor = first if executor_start is None else executor_start
    for call, call_start in zip(calls, starts, strict=True):
        duration = float(call.latency_ms or 0.0)
        start = max(anchor + call_start - first, 0.0)
        kind = "call" if call.status == "success" else "failed"
        rows.append(Bar(f"#{call.id} {call.tool_name}", kind, start, duration, f"#call-{call.id}"))
    total = max([offset, *(b.start_ms + b.duration_ms for b in rows)], default=0.0) or 1.0
    scale = WIDTH / total
    placed = [
        Bar(
            b.label,
            b.kind,
            b.start_ms,
            b.duration_ms,
            b.href,
            x=LABEL_WIDTH + b.start_ms * scale,
            width=max(b.duration_ms * scale, 1.0),
            y=index * ROW_HEIGHT,
        )
        for index, b in enumerate(rows)
    ]
    return Timeline(placed, total, max(len(placed), 1) * ROW_HEIGHT + 4)
