"""An outside agent's evidence queries: the Executor's tools run for an agent, read-only, each call
recorded as a tool invocation of an *agent session* so that claims the agent builds on the results
can be judged by the Gatekeeper (server.usecases.check) like the pipeline's own.

An agent session is opened by the first query that names none: a session row whose status is
AGENT from the moment it exists (it never gets a pipeline answer, and a RUNNING row would be failed
as orphaned at the next start), marked `agent_session` in its extras. Later queries name it to add
their calls to it. Queries add calls only to agent sessions, never to
a pipeline's session: a diagnosis's trace stays what its pipeline recorded. Every call is committed
as it ends, so a crash loses no recorded call.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from evigate.rules.enums import SessionStatus
from evigate.server.deadline import Deadline
from evigate.server.tools import ArgumentError, SessionToolBox, ToolBackend, ToolRegistry, default_registry
from evigate.server.tools.backend import InvocationRecorder
from evigate.storage.errors import SessionNotFound
from evigate.storage.records import SessionRecord

AGENT_MARK = "agent_session"
JSON = dict[str, Any]


class AgentSessionStore(InvocationRecorder, Protocol):
    async def create_session(
        self,
        session_id: str,
        query: str,
        language: str,
        owner: str,
        *,
        status: str = ...,
        extras: JSON | None = None,
    ) -> SessionRecord: ...

    async def get_session(self, session_id: str) -> SessionRecord | None: ...


class BadQuery(Exception):  # noqa: N818 - named after what the caller did
    """An unknown tool or unusable arguments: refused before any session is opened or call recorded."""


class NotAnAgentSession(Exception):  # noqa: N818 - named after what the caller did
    """A query named a session that the pipeline ran: its trace is not for outside calls."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"session {session_id} is a diagnosis session; query tools add calls only to agent "
            "sessions (omit session_id to open one)"
        )
        self.session_id = session_id


@dataclass(frozen=True)
class ToolSpec:
    """One query tool as an agent sees it: its JSON schema and how its results are cited."""

    name: str
    description: str
    parameters: JSON  # JSON Schema of the arguments
    item_array: str  # items are cited as $.<item_array>[i]
    claim_types: tuple[str, ...] | None  # claim types that may cite it; None: any
    no_evidence_message: str


@dataclass(frozen=True)
class QueryOutcome:
    session_id: str
    invocation_id: int
    tool_name: str
    status: str  # "success" | "failed"
    error: str | None
    raw_result: JSON | None
    retrieval_details: JSON  # evidence_status, match_level, evidence_refs


def is_agent_session(session: SessionRecord) -> bool:
    """AGENT; or, for a session opened before that status existed, FAILED with the mark."""
    return session.status == SessionStatus.AGENT or bool((session.extras or {}).get(AGENT_MARK))


class AgentQueryUseCase:
    def __init__(
        self,
        store: AgentSessionStore,
        backend: ToolBackend,
        owner: str,
        *,
        registry: ToolRegistry | None = None,
        invalidate: Callable[[str], None] | None = None,
        new_id: Callable[[], str] = lambda: f"agent-{uuid.uuid4().hex}",
    ) -> None:
        self._store = store
        self._backend = backend
        self._owner = owner
        self._registry = registry if registry is not None else default_registry()
        self._invalidate = invalidate  # drops a session's cached trace once a call is added
        self._new_id = new_id

    def tools(self) -> list[ToolSpec]:
        """Every registered tool, in registration order."""
        return [
            ToolSpec(
                name=tool.name,
                description=tool.description,
                parameters={
                    "type": "object",
                    "properties": dict(tool.properties),
                    "required": list(tool.required),
                    "additionalProperties": False,
                },
                item_array=tool.item_array,
                claim_types=None if tool.claim_types is None else tuple(sorted(tool.claim_types)),
                no_evidence_message=tool.no_evidence_message,
            )
            for tool in self._registry
        ]

    async def query(
        self, tool_name: str, arguments: Mapping[str, Any], session_id: str | None, deadline: Deadline
    ) -> QueryOutcome:
        """Runs one tool and records the call. BadQuery for an unknown tool or bad arguments (nothing
        recorded); SessionNotFound / NotAnAgentSession when `session_id` will not do."""
        tool = self._registry.get(tool_name)
        if tool is None:
            raise BadQuery(f"unknown tool {tool_name!r}; available: {', '.join(self._registry.names())}")
        try:
            tool.normalize(arguments)
        except ArgumentError as error:
            raise BadQuery(str(error)) from None
        if session_id is None:
            session_id = await self._open(tool_name)
        else:
            session = await self._store.get_session(session_id)
            if session is None:
                raise SessionNotFound(session_id)
            if not is_agent_session(session):
                raise NotAnAgentSession(session_id)
        box = SessionToolBox(self._backend, self._store, session_id, registry=self._registry)
        result = await box.call(tool_name, arguments, deadline)
        if self._invalidate is not None:
            self._invalidate(session_id)
        return QueryOutcome(
            session_id=session_id,
            invocation_id=result.invocation_id,
            tool_name=result.tool_name,
            status=result.status,
            error=result.error,
            raw_result=result.raw_result,
            retrieval_details=result.retrieval_details,
        )

    async def _open(self, first_tool: str) -> str:
        session_id = self._new_id()
        await self._store.create_session(
            session_id,
            f"agent session ({first_tool})",
            "en",
            self._owner,
            status=SessionStatus.AGENT,
            extras={AGENT_MARK: True},
        )
        return session_id
