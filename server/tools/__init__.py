"""The Executor's tools: query_metrics, query_logs, lookup_knowledge (docs/design.md §6).

build_backend() gives a ToolBackend; SessionToolBox wraps it for one session (validation, evidence
refs, dedup, recording through an InvocationRecorder such as storage's Repository).
"""

from __future__ import annotations

from pathlib import Path

from server.tools.args import TOOL_NAMES, ArgumentError, openai_schemas
from server.tools.backend import (
    CaseLike,
    CaseSource,
    InvocationRecorder,
    KnowledgeHits,
    KnowledgeQuery,
    LogsQuery,
    MetricsQuery,
    Page,
    TimeWindow,
    ToolBackend,
    ToolError,
)
from server.tools.fixture import FixtureBackend
from server.tools.knowledge import DEFAULT_L1_MARGIN, DEFAULT_L1_THRESHOLD
from server.tools.toolbox import SessionToolBox

BACKEND_KINDS = ("fixture",)


def demo_data_dir() -> Path:
    """The bundled demo world (server/demo/), shipped as package data."""
    return Path(__file__).resolve().parent.parent / "demo"


def build_backend(
    kind: str,
    data_dir: Path | None,
    cases: CaseSource,
    *,
    l1_threshold: float = DEFAULT_L1_THRESHOLD,
    l1_margin: float = DEFAULT_L1_MARGIN,
) -> ToolBackend:
    """kind "fixture" reads data_dir (None → the bundled demo world); cases come from the database."""
    if kind != "fixture":
        raise ValueError(f"unknown tool backend {kind!r}; available: {', '.join(BACKEND_KINDS)}")
    directory = data_dir if data_dir is not None else demo_data_dir()
    if not directory.is_dir():
        raise ValueError(f"tool data directory not found: {directory}")
    return FixtureBackend(directory, cases, l1_threshold, l1_margin)


__all__ = [
    "BACKEND_KINDS",
    "DEFAULT_L1_MARGIN",
    "DEFAULT_L1_THRESHOLD",
    "TOOL_NAMES",
    "ArgumentError",
    "CaseLike",
    "CaseSource",
    "FixtureBackend",
    "InvocationRecorder",
    "KnowledgeHits",
    "KnowledgeQuery",
    "LogsQuery",
    "MetricsQuery",
    "Page",
    "SessionToolBox",
    "TimeWindow",
    "ToolBackend",
    "ToolError",
    "build_backend",
    "demo_data_dir",
    "openai_schemas",
]
