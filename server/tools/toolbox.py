"""SessionToolBox: the ToolBox of one session. Validates, runs, shapes, dedupes and records every call.

Dedup (decision): a call whose normalized arguments equal an earlier *successful* call of the same
tool in this session does not reach the backend. It is recorded as its own row with evidence_status
"deduped", `deduped_from` = the earlier invocation id, the earlier raw_result, match_level and
evidence_refs, so a citation of either invocation id resolves to the same texts. Failed calls are
never deduped (a retry may succeed). A failed call records evidence_status "failed" and no refs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from evigate.rules.enums import CallStatus, EvidenceStatus, MatchLevel
from evigate.server.deadline import Deadline
from evigate.server.queries.types import JSON, ToolError
from evigate.server.tools.args import ArgumentError
from evigate.server.tools.backend import InvocationRecorder, ToolBackend
from evigate.server.tools.calls import ToolCallResult
from evigate.server.tools.registry import ToolRegistry, default_registry
from evigate.server.tools.tool import Tool

log = logging.getLogger("evigate.tools")
OnCall = Callable[[ToolCallResult], Awaitable[None]]


def _jsonable(arguments: Any) -> JSON:
    """The arguments as given, made storable whatever they contain."""
    try:
        data = json.loads(json.dumps(arguments, ensure_ascii=False, default=repr))
    except (TypeError, ValueError):
        return {"_unserializable": repr(arguments)}
    return data if isinstance(data, dict) else {"_value": data}


class SessionToolBox:
    def __init__(
        self,
        backend: ToolBackend,
        recorder: InvocationRecorder,
        session_id: str,
        on_call: OnCall | None = None,
        registry: ToolRegistry | None = None,
    ) -> None:
        self._backend = backend
        self._registry = registry if registry is not None else default_registry()
        self._recorder = recorder
        self._session_id = session_id
        self._on_call = on_call
        self._done: dict[str, ToolCallResult] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def schemas(self) -> list[JSON]:
        return self._registry.openai_schemas()

    async def call(self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline) -> ToolCallResult:
        started = time.perf_counter()
        given = _jsonable(arguments)
        tool = self._registry.get(tool_name)
        try:
            if tool is None:
                available = ", ".join(self._registry.names())
                raise ArgumentError(f"unknown tool {tool_name!r}; available: {available}")
            normalized = tool.normalize(arguments)
        except ArgumentError as exc:
            return await self._record(tool_name, given, started, error=str(exc))
        key = json.dumps([tool_name, normalized], sort_keys=True, ensure_ascii=False)
        async with self._locks.setdefault(key, asyncio.Lock()):
            earlier = self._done.get(key)
            if earlier is not None:
                details = {
                    **earlier.retrieval_details,
                    "evidence_status": EvidenceStatus.DEDUPED,
                    "deduped_from": earlier.invocation_id,
                }
                return await self._record(tool_name, given, started, raw=earlier.raw_result, details=details)
            result = await self._run(tool, normalized, given, deadline, started)
            if result.status == CallStatus.SUCCESS:
                self._done[key] = result
            return result

    async def _run(
        self, tool: Tool, args: JSON, given: JSON, deadline: Deadline, started: float
    ) -> ToolCallResult:
        name = tool.name
        if deadline.expired():
            return await self._record(name, given, started, error="deadline exceeded before the call")
        try:
            answer = await asyncio.wait_for(tool.answer(args, self._backend), timeout=deadline.remaining())
        except TimeoutError:
            return await self._record(name, given, started, error="deadline exceeded during the call")
        except (ToolError, ArgumentError) as exc:
            return await self._record(name, given, started, error=str(exc))
        except Exception as exc:  # a backend bug must still leave a failed row, never a no_evidence one
            log.exception("tool backend error session_id=%s tool=%s", self._session_id, name)
            return await self._record(
                name, given, started, error=f"tool backend error: {type(exc).__name__}: {exc}"
            )
        raw, details = tool.result(answer) if answer.items else tool.no_evidence(args, answer)
        return await self._record(name, given, started, raw=raw, details=details)

    async def _record(
        self,
        tool: str,
        given: JSON,
        started: float,
        *,
        raw: JSON | None = None,
        details: JSON | None = None,
        error: str | None = None,
    ) -> ToolCallResult:
        status = CallStatus.FAILED if error is not None else CallStatus.SUCCESS
        if details is None:
            details = {
                "evidence_status": EvidenceStatus.FAILED,
                "match_level": MatchLevel.NONE,
                "evidence_refs": [],
            }
        latency_ms = (time.perf_counter() - started) * 1000
        created_at = datetime.now(UTC)
        invocation_id = await self._recorder.record_invocation(
            session_id=self._session_id,
            tool_name=tool,
            arguments=given,
            status=status,
            error=error,
            raw_result=raw,
            retrieval_details=details,
            latency_ms=latency_ms,
            created_at=created_at,
        )
        result = ToolCallResult(
            invocation_id, tool, given, status, error, raw, details, latency_ms, created_at
        )
        log.info(
            "tool_call session_id=%s invocation_id=%s tool=%s status=%s evidence_status=%s latency_ms=%.1f",
            self._session_id,
            invocation_id,
            tool,
            status,
            details["evidence_status"],
            latency_ms,
        )
        if self._on_call is not None:
            await self._on_call(result)
        return result
