"""The words tools and sources share: the typed queries a tool asks, the answers a source gives,
time windows, and ToolError (a source could not check: data missing, unreadable or corrupt).

Neutral ground: server.tools and server.sources both import this package, and it imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from evigate.rules.errors import EvigateError

JSON = dict[str, Any]


class ToolError(EvigateError):
    """The tool could not check: recorded as a failed call, never as no evidence."""


@dataclass(frozen=True)
class TimeWindow:
    """A closed time window in UTC; None on either side means unbounded."""

    since: datetime | None
    until: datetime | None

    def contains(self, moment: datetime) -> bool:
        return (self.since is None or moment >= self.since) and (self.until is None or moment <= self.until)

    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        """An interval [start, end] (end None = still open) touches the window."""
        return (self.until is None or start <= self.until) and (
            self.since is None or end is None or end >= self.since
        )


@dataclass(frozen=True)
class MetricsQuery:
    service: str | None
    alert_name: str | None
    state: str | None
    window: TimeWindow
    limit: int


@dataclass(frozen=True)
class LogsQuery:
    service: str | None
    level: str | None
    keyword: str | None
    pattern: str | None
    window: TimeWindow
    limit: int
    query: str | None = None  # relevance mode: templates ranked against these words


@dataclass(frozen=True)
class PatternsQuery:
    """summarize_logs: the events of a service / level / window, grouped into templates."""

    service: str | None
    level: str | None
    window: TimeWindow
    limit: int
    changed_since: datetime | None = None  # compare each template before and after this moment


@dataclass(frozen=True)
class KnowledgeQuery:
    query: str
    limit: int


@dataclass(frozen=True)
class PromQLQuery:
    """A free PromQL expression or a named signal of a service; an instant query at `at` (None:
    now), or a range query over [start, end] when `start` is given."""

    expr: str | None
    signal: str | None
    service: str | None
    at: datetime | None = None
    start: datetime | None = None
    end: datetime | None = None
    step_s: float | None = None
    about: str | None = None  # words of a question: the service's discovered metric they mean
    namespace: str | None = None  # with about and no service: the namespace's metrics (None: the store's)
    compare: bool = False  # with about: the words ask for a cause, so the metric is split by its labels


@dataclass(frozen=True)
class SeriesAnswer:
    """What a PromQL query returned: series items (each cited as $.series[i]), their ref texts in
    the same order, how many series matched before the bound, and facts about the query (the
    expression, window, step, notes of what the guard changed)."""

    items: list[JSON]
    texts: list[str]
    total: int
    facts: JSON


@dataclass(frozen=True)
class Page:
    """Items in result order (at most the query's limit) and how many matched in all."""

    items: list[JSON]
    total: int
    # More keys of the raw result beside the items (query_logs: skipped_lines, parsers).
    extra: JSON = field(default_factory=dict)


@dataclass(frozen=True)
class KnowledgeHits:
    blocks: list[JSON]
    match_level: str  # a MatchLevel: L0 | L1 | none (then blocks is empty)
    # How the match was made, for retrieval_details["retrieval"]: method (hybrid | bm25), model,
    # degraded (why dense scores are missing), threshold and the scores of the best documents.
    details: Mapping[str, Any] = field(default_factory=dict)


class CaseLike(Protocol):
    """The case_library fields lookup_knowledge searches (storage.records.CaseRecord has them)."""

    @property
    def case_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def root_cause(self) -> str: ...
    @property
    def solution(self) -> str: ...
    @property
    def fault_category(self) -> str: ...


class KnowledgeSearch(Protocol):
    """How lookup_knowledge searches the knowledge files and the case library: the retrieval of
    `sources.retrieval.semantic_knowledge.SemanticKnowledge`, hybrid or, without an embedder, BM25 alone."""

    async def search(self, query: KnowledgeQuery, cases: Sequence[CaseLike]) -> KnowledgeHits: ...


class CaseSource(Protocol):
    """The case library: storage's Repository.list_cases."""

    async def list_cases(self, limit: int = 1000) -> Sequence[CaseLike]: ...
