"""The tool registry: the one place tools are registered, and what everything else reads of them.

SessionToolBox dispatches through it; the OpenAI schemas offered to the LLM Executor, the prompts'
tool list, the skill catalog's tool names and the Gatekeeper's tool table (raw_path arrays, citable
claim types) are read from it. Adding a tool is writing its module (a `Tool`, see tool.py) and
adding it to BUILTIN_TOOLS below.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator

from evigate.rules.rule_catalog import RuleCatalog, load_rule_catalog
from evigate.server.queries.types import JSON
from evigate.server.tools import (
    k8s_rollout_history,
    list_services,
    lookup_knowledge,
    query_k8s,
    query_k8s_events,
    query_logs,
    query_metrics,
    query_promql,
    summarize_logs,
)
from evigate.server.tools.tool import Tool

BUILTIN_TOOLS: tuple[Tool, ...] = (
    query_metrics.TOOL,
    query_logs.TOOL,
    lookup_knowledge.TOOL,
    query_promql.TOOL,
    summarize_logs.TOOL,
    list_services.TOOL,
    query_k8s.TOOL,
    query_k8s_events.TOOL,
    k8s_rollout_history.TOOL,
)


class ToolRegistry:
    """Tools by name, in registration order (the order the LLM is offered them)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def openai_schemas(self) -> list[JSON]:
        return [tool.schema() for tool in self._tools.values()]

    def catalog(self, base: RuleCatalog | None = None) -> RuleCatalog:
        """The Gatekeeper catalog (rules/gatekeeper-rules.json unless given) with these tools' table."""
        return (base if base is not None else load_rule_catalog()).with_tools(t.citation() for t in self)


@functools.cache
def default_registry() -> ToolRegistry:
    """The tools the service runs with."""
    return ToolRegistry(BUILTIN_TOOLS)
