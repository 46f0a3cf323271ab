"""A tool is one module and one registry line: nothing outside server/tools/ imports a tool's module,
and the offline agents plan and phrase a tool they have no code for through its own hooks."""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from evigate.rules.types import EvidenceRef
from evigate.server.agents.offline import calls as offline_calls
from evigate.server.agents.offline import claims, tool_hooks
from evigate.server.queries.types import JSON
from evigate.server.tools import refs
from evigate.server.tools.backend import ToolBackend
from evigate.server.tools.calls import ToolCallResult
from evigate.server.tools.registry import BUILTIN_TOOLS, ToolRegistry
from evigate.server.tools.tool import Answer, OfflineHooks, Tool
from evigate.server.understanding.entities import extract
from tests.agents.offline.demo_catalog import DEMO_VIEW

REPO = Path(__file__).resolve().parents[2]
TOOL_MODULES = {f"evigate.server.tools.{tool.name}" for tool in BUILTIN_TOOLS}


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_only_the_registry_imports_a_tools_module() -> None:
    """Everything else (toolbox, agents, prompts, Gatekeeper table) reads tools through the registry."""
    outside = [
        f"{path.relative_to(REPO)} imports {sorted(_imported_modules(path) & TOOL_MODULES)}"
        for path in sorted((REPO / "server").rglob("*.py"))
        if path.parent != REPO / "server" / "tools" and _imported_modules(path) & TOOL_MODULES
    ]
    assert not outside, "\n".join(outside)


# A new tool, written as its module would be: its Tool with its offline hooks.
def _plan(question: str, services: Sequence[str]) -> Sequence[JSON]:
    return [{"service": s} for s in services[:1]] if "trace" in question.lower() else []


def _found(arguments: JSON, texts: Sequence[str], language: str) -> str:
    return f'The slowest trace of {arguments["service"]} is: "{texts[0]}".'


def _nothing(arguments: JSON, excerpt: str, language: str) -> str:
    return f"This query found no traces of {arguments['service']}."


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    return Answer([], 0)


def _text(item: Mapping[str, Any]) -> str:
    return ", ".join(refs.other_pairs(item, ()))


QUERY_TRACES = Tool(
    name="query_traces",
    description="The slowest traces of a service.",
    properties={"service": {"type": "string"}},
    answer=_answer,
    item_array="traces",
    item_text=_text,
    no_evidence_message="no traces matched",
    query_keys=("service",),
    required=("service",),
    offline=OfflineHooks(plan=_plan, found=_found, nothing=_nothing),
)


@pytest.fixture
def with_query_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with one more line: the built-in tools and query_traces."""
    registry = ToolRegistry((*BUILTIN_TOOLS, QUERY_TRACES))
    monkeypatch.setattr(tool_hooks, "default_registry", lambda: registry)


@pytest.mark.usefixtures("with_query_traces")
def test_the_offline_agents_plan_and_phrase_a_new_tool_through_its_hooks() -> None:
    question = "show the slowest trace of payment-service"
    planned = offline_calls.plan_calls(extract(question, DEMO_VIEW), question)
    (call,) = [c for c in planned if c.tool_name == "query_traces"]
    assert call.arguments == {"service": "payment-service"}
    result = ToolCallResult(1, "query_traces", call.arguments, "success", None, {}, {})
    found = [EvidenceRef("$.traces[0]", "trace_id=abc, duration=2.1s")]
    text = claims.observation_text(call, result, found, "en")
    assert text == 'The slowest trace of payment-service is: "trace_id=abc, duration=2.1s".'
    assert (
        claims.negative_text(call, "no traces matched", "en")
        == "This query found no traces of payment-service."
    )


def test_without_the_registry_line_the_offline_agents_never_call_it() -> None:
    question = "show the slowest trace of payment-service"
    planned = offline_calls.plan_calls(extract(question, DEMO_VIEW), question)
    assert "query_traces" not in {c.tool_name for c in planned}
