"""The registered tools' offline hooks (server/tools/tool.py OfflineHooks): a tool the offline agents
have no code of their own for is planned and phrased through its own module, so adding one is its
module and a registry line."""

from __future__ import annotations

from collections.abc import Sequence

from evigate.server.queries.types import JSON
from evigate.server.tools.registry import default_registry
from evigate.server.tools.tool import OfflineHooks

_NONE = OfflineHooks()


def hooks_of(tool_name: str) -> OfflineHooks:
    tool = default_registry().get(tool_name)
    return tool.offline if tool is not None else _NONE


def planned_arguments(question: str, services: Sequence[str]) -> list[tuple[str, JSON]]:
    """(tool, arguments) of every registered tool whose plan hook asks for a call."""
    return [
        (tool.name, dict(arguments))
        for tool in default_registry()
        if tool.offline.plan is not None
        for arguments in tool.offline.plan(question, services)
    ]
