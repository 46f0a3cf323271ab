"""What the agents see of the tools: the ToolBox of one session and the ToolCallResult of a call
(SessionToolBox in toolbox.py is the real one; tests use fakes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from evigate.server.deadline import Deadline

JSON = dict[str, Any]


@dataclass(frozen=True)
class ToolCallResult:
    """What one tool call returned, as recorded in tool_invocation."""

    invocation_id: int
    tool_name: str
    arguments: JSON
    status: str  # a CallStatus word: "success" | "failed"
    error: str | None
    raw_result: JSON | None
    retrieval_details: JSON  # {"evidence_status", "match_level", "evidence_refs", ["deduped_from"]}
    latency_ms: float = 0.0  # as recorded in the row, so StreamChat and GetTrace show the same
    created_at: datetime | None = None


class ToolBox(Protocol):
    """The tools of one session. Every call is recorded; identical repeats are deduped."""

    def schemas(self) -> list[JSON]:
        """OpenAI function-calling schemas of the available tools."""
        ...

    async def call(
        self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline
    ) -> ToolCallResult: ...
