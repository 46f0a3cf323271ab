"""The evidence tools (query_metrics, query_logs, lookup_knowledge, …) as MCP tools: one per
registered tool, with that tool's own JSON schema plus `session_id`, each call recorded in an agent
session (server.usecases.agent_queries) so that claims built on its result can be checked."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import ToolAnnotations
from pydantic import ConfigDict

from evigate.server.deadline import Deadline
from evigate.server.mcp import inputs, present
from evigate.server.mcp.errors import as_tool_errors
from evigate.server.usecases.agent_queries import AgentQueryUseCase, ToolSpec

SESSION_ID_SCHEMA = {
    "type": ["string", "null"],
    "description": "the agent session to add this call to (returned by an earlier query); "
    "omit it to open a new one",
}
CITE_HINT = (
    " Recorded in an agent session: cite an item as a binding with this call's invocation_id, "
    "tool_name and the ref's raw_path, then check the claims with check_claims(session_id, evidence)."
)


class QueryArguments(ArgModelBase):
    """Passes the tool's own arguments through: the input schema (checked by the SDK) and the tool's
    validation (recorded as a failed call, as the pipeline records it) judge them."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)
    session_id: str | None = None

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "arguments": dict(self.model_extra or {})}


def query_tool(spec: ToolSpec, queries: AgentQueryUseCase) -> Tool:
    async def call(session_id: str | None, arguments: dict[str, Any]) -> dict[str, Any]:
        inputs.require(inputs.session_id(session_id, required=False))
        with as_tool_errors():
            outcome = await queries.query(spec.name, arguments, session_id, Deadline.none())
        return present.query(outcome)

    parameters = dict(spec.parameters)
    parameters["properties"] = {**spec.parameters["properties"], "session_id": SESSION_ID_SCHEMA}
    return Tool(
        fn=call,
        name=spec.name,
        title=None,
        context_kwarg=None,
        description=spec.description + CITE_HINT,
        parameters=parameters,
        fn_metadata=FuncMetadata(arg_model=QueryArguments),
        is_async=True,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )


def catalog(queries: AgentQueryUseCase) -> list[dict[str, Any]]:
    """The tool catalog resource: each tool, its arguments, how it is cited and by which claims."""
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
            "cited_as": [f"$.{spec.item_array}[i]", "$.no_evidence"],
            "citable_by": list(spec.claim_types) if spec.claim_types is not None else "any claim type",
            "no_evidence_message": spec.no_evidence_message,
        }
        for spec in queries.tools()
    ]
