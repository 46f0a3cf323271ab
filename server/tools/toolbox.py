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

from server.agents.base import ToolCallResult
from server.deadline import Deadline
from server.tools import args as tool_args
from server.tools import refs
from server.tools.backend import JSON, InvocationRecorder, Page, TimeWindow, ToolBackend, ToolError
from server.tools.logstore import display_time

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
    ) -> None:
        self._backend = backend
        self._recorder = recorder
        self._session_id = session_id
        self._on_call = on_call
        self._done: dict[str, ToolCallResult] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def schemas(self) -> list[JSON]:
        return tool_args.openai_schemas()

    async def call(self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline) -> ToolCallResult:
        started = time.perf_counter()
        given = _jsonable(arguments)
        try:
            normalized = tool_args.normalize(tool_name, arguments)
        except tool_args.ArgumentError as exc:
            return await self._record(tool_name, given, started, error=str(exc))
        key = json.dumps([tool_name, normalized], sort_keys=True, ensure_ascii=False)
        async with self._locks.setdefault(key, asyncio.Lock()):
            earlier = self._done.get(key)
            if earlier is not None:
                details = {
                    **earlier.retrieval_details,
                    "evidence_status": "deduped",
                    "deduped_from": earlier.invocation_id,
                }
                return await self._record(tool_name, given, started, raw=earlier.raw_result, details=details)
            result = await self._run(tool_name, normalized, given, deadline, started)
            if result.status == "success":
                self._done[key] = result
            return result

    async def _run(
        self, tool: str, args: JSON, given: JSON, deadline: Deadline, started: float
    ) -> ToolCallResult:
        if deadline.expired():
            return await self._record(tool, given, started, error="deadline exceeded before the call")
        try:
            raw, details = await asyncio.wait_for(self._query(tool, args), timeout=deadline.remaining())
        except TimeoutError:
            return await self._record(tool, given, started, error="deadline exceeded during the call")
        except (ToolError, tool_args.ArgumentError) as exc:
            return await self._record(tool, given, started, error=str(exc))
        except Exception as exc:  # a backend bug must still leave a failed row, never a no_evidence one
            log.exception("tool backend error session_id=%s tool=%s", self._session_id, tool)
            return await self._record(
                tool, given, started, error=f"tool backend error: {type(exc).__name__}: {exc}"
            )
        return await self._record(tool, given, started, raw=raw, details=details)

    async def _query(self, tool: str, args: JSON) -> tuple[JSON, JSON]:
        backend = self._backend
        if tool == "lookup_knowledge":
            hits = await backend.lookup_knowledge(tool_args.knowledge_query(args))
            if not hits.blocks:
                return self._no_evidence(tool, args, None, match_level="none")
            raw = {"evidence_blocks": hits.blocks, "total": len(hits.blocks)}
            return raw, _supported(tool, hits.blocks, hits.match_level)
        page: Page
        if tool == "query_metrics":
            metrics = tool_args.metrics_query(args, backend.now())
            page, window, key = await backend.query_metrics(metrics), metrics.window, "alerts"
        else:
            logs = tool_args.logs_query(args, backend.now())
            page, window, key = await backend.query_logs(logs), logs.window, "logs"
        if not page.items:
            return self._no_evidence(tool, args, window, match_level="none")
        return {key: page.items, "total": page.total}, _supported(tool, page.items, "L0")

    def _no_evidence(
        self, tool: str, args: JSON, window: TimeWindow | None, match_level: str
    ) -> tuple[JSON, JSON]:
        filters = {k: str(v) for k, v in args.items() if k not in ("limit", "query", "since", "until")}
        if window is not None and window.since is not None:
            filters["since"] = display_time(window.since)
        if window is not None and window.until is not None:
            filters["until"] = display_time(window.until)
        if tool == "lookup_knowledge":
            filters["match_level"] = match_level
        raw, ref = refs.no_evidence(tool, args, filters)
        return raw, {"evidence_status": "no_evidence", "match_level": match_level, "evidence_refs": [ref]}

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
        status = "failed" if error is not None else "success"
        if details is None:
            details = {"evidence_status": "failed", "match_level": "none", "evidence_refs": []}
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


def _supported(tool: str, items: list[JSON], match_level: str) -> JSON:
    return {
        "evidence_status": "supported",
        "match_level": match_level,
        "evidence_refs": refs.item_refs(tool, items),
    }
