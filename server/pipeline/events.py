"""What the pipeline hands to the server: the final result and the stage events of StreamChat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class ChatResult:
    """The outcome of a session, in seed-shaped dicts (server.codec maps them to ChatResponse)."""

    session_id: str
    status: str  # "SUCCESS" | "FAILED"
    answer: str
    composer_output: JSON | None
    verdict: JSON | None
    gatekeeper_result: JSON | None
    evidence: JSON | None
    failure_reason: str
    # What this run measured, not part of the result (empty for a stored result read back): each
    # stage's latency, and the answer check's record (refused Composer outputs, the answer's source).
    stage_latencies: tuple[JSON, ...] = field(default=(), compare=False)
    answer_check: JSON | None = field(default=None, compare=False)


@dataclass(frozen=True)
class StageEvent:
    """One stage's output as it happens. `kind` names the StreamChatResponse oneof field:
    plan, tool_invocation, executor_evidence, gatekeeper_result, verdict, composer_output, result."""

    session_id: str
    kind: str
    round: int
    data: JSON | ChatResult
