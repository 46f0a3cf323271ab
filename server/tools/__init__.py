"""The Executor's tools: query_metrics, query_logs, lookup_knowledge, query_promql, summarize_logs
(docs/design.md §6).

Each tool is one module holding a `Tool` (tool.py), registered in registry.py. build_backend() gives
the SourceSet of a data directory's files (server.sources), the tools' backend; SessionToolBox runs
the registered tools against it for one session (validation, evidence refs, dedup, recording
through an InvocationRecorder such as storage's Repository).
"""

from __future__ import annotations

from pathlib import Path

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
    TimeWindow,
    ToolError,
)
from evigate.server.sources.files.backend import FilesSource, files_source_set
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.retrieval.ranking import RankingConfig
from evigate.server.sources.source_set import SourceSet
from evigate.server.tools.args import ArgumentError
from evigate.server.tools.backend import InvocationRecorder, ToolBackend
from evigate.server.tools.registry import ToolRegistry, default_registry
from evigate.server.tools.tool import Answer, Tool
from evigate.server.tools.toolbox import SessionToolBox

TOOL_NAMES = default_registry().names()


def openai_schemas() -> list[JSON]:
    """The function-calling schemas of the service's tools."""
    return default_registry().openai_schemas()


def demo_data_dir() -> Path:
    """The bundled demo world (server/demo/), shipped as package data."""
    return Path(__file__).resolve().parent.parent / "demo"


def build_backend(
    data_dir: Path | None,
    cases: CaseSource,
    *,
    lexical: RankingConfig | None = None,
    logs: LogConfig | None = None,
    knowledge: KnowledgeSearch | None = None,
    embedder: Embedder | None = None,
) -> SourceSet:
    """The files source over data_dir (None → the bundled demo world); cases come from the database;
    the log files from `logs` (None: data_dir/logs read with the default field names and formats);
    `knowledge`: how lookup_knowledge searches (None: the retrieval over data_dir's knowledge with
    no embedder, deciding a match by the `lexical` rule);
    `embedder`: what query_logs' relevance mode ranks by beside BM25 (None: BM25 alone)."""
    directory = data_dir if data_dir is not None else demo_data_dir()
    if not directory.is_dir():
        raise ValueError(f"tool data directory not found: {directory}")
    files = FilesSource(directory, cases, lexical=lexical, logs=logs, knowledge=knowledge, embedder=embedder)
    return files_source_set(files)


def knowledge_dir(data_dir: Path | None) -> Path:
    """Where the fixture backend reads its knowledge files."""
    return (data_dir if data_dir is not None else demo_data_dir()) / "knowledge"


__all__ = [
    "TOOL_NAMES",
    "Answer",
    "ArgumentError",
    "CaseLike",
    "CaseSource",
    "FilesSource",
    "InvocationRecorder",
    "KnowledgeHits",
    "KnowledgeQuery",
    "KnowledgeSearch",
    "LogsQuery",
    "MetricsQuery",
    "Page",
    "PatternsQuery",
    "SessionToolBox",
    "SourceSet",
    "TimeWindow",
    "Tool",
    "ToolBackend",
    "ToolError",
    "ToolRegistry",
    "build_backend",
    "default_registry",
    "demo_data_dir",
    "knowledge_dir",
    "openai_schemas",
]
