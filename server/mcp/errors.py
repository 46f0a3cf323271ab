"""The use cases' errors as MCP tool errors: what the gRPC front end sends as a status, an agent
reads as the text of a failed tool call (its reason first, then the message). Anything else is a
bug: the SDK answers it with a bare "Error executing tool", never the exception's text."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError

from evigate.rules.errors import EvigateError
from evigate.server.usecases.agent_queries import BadQuery, NotAnAgentSession


@contextmanager
def as_tool_errors() -> Iterator[None]:
    try:
        yield
    except EvigateError as error:
        reason, _ = error.error_info()
        raise ToolError(f"{error.status_code.value} {reason}: {error.status_message()}") from None
    except BadQuery as error:
        raise ToolError(f"INVALID_ARGUMENT INVALID_QUERY: {error}") from None
    except NotAnAgentSession as error:
        raise ToolError(f"FAILED_PRECONDITION NOT_AN_AGENT_SESSION: {error}") from None
