"""The tool-backend seam: what a backend must answer for the tools to run.

A backend answers four typed queries (server.queries) and raises ToolError when it could not check;
one that has a Prometheus-compatible store also answers PromQL (`PromQLBackend`). Shaping results,
evidence refs, dedup and recording live in SessionToolBox, so every backend produces the same
tool_invocation rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from evigate.server.queries.types import (
    JSON,
    CaseLike,
    CaseSource,
    KnowledgeHits,
    KnowledgeQuery,
    KnowledgeSearch,
    LogsQuery,
    MetricsQuery,
    Page,
    PatternsQuery,
    PromQLQuery,
    SeriesAnswer,
    TimeWindow,
    ToolError,
)


class ToolBackend(Protocol):
    """One small interface per pluggable part: the fixture backend and test doubles implement it."""

    def now(self) -> datetime:
        """The reference time ("now") for relative time windows."""
        ...

    async def query_metrics(self, query: MetricsQuery) -> Page: ...

    async def query_logs(self, query: LogsQuery) -> Page: ...

    async def summarize_logs(self, query: PatternsQuery) -> Page: ...

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits: ...


@runtime_checkable
class PromQLBackend(Protocol):
    """A backend that can answer PromQL (a Prometheus-compatible store is configured)."""

    async def query_promql(self, query: PromQLQuery) -> SeriesAnswer: ...


class InvocationRecorder(Protocol):
    """Where calls are recorded: storage's Repository.record_invocation."""

    async def record_invocation(  # noqa: PLR0917 - the storage signature
        self,
        session_id: str,
        tool_name: str,
        arguments: dict[str, Any],
        status: str,
        error: str | None,
        raw_result: dict[str, Any] | None,
        retrieval_details: dict[str, Any],
        latency_ms: float,
        *,
        created_at: datetime | None = None,
    ) -> int: ...


__all__ = [
    "JSON",
    "CaseLike",
    "CaseSource",
    "InvocationRecorder",
    "KnowledgeHits",
    "KnowledgeQuery",
    "KnowledgeSearch",
    "LogsQuery",
    "MetricsQuery",
    "Page",
    "PatternsQuery",
    "PromQLBackend",
    "PromQLQuery",
    "SeriesAnswer",
    "TimeWindow",
    "ToolBackend",
    "ToolError",
]
