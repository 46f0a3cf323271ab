"""The MCP server: the diagnosis, the Gatekeeper, the read side and the evidence tools as MCP tools,
each a thin adapter over one use case; the traces, the runbooks and the tool catalog as resources.
Nothing here writes except `feedback` (and the sessions `diagnose` and the query tools record)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import ToolAnnotations

from evigate.server.deadline import Deadline
from evigate.server.mcp import inputs, present
from evigate.server.mcp.errors import as_tool_errors
from evigate.server.mcp.query_tools import catalog, query_tool
from evigate.server.usecases.agent_queries import AgentQueryUseCase
from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.chat import ChatInput, ChatUseCase
from evigate.server.usecases.check import CheckUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.records import SessionNotFound
from evigate.server.usecases.trace import TraceUseCase

JSON = dict[str, Any]
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "evigate answers questions about incidents from alerts, metrics, logs and runbooks, and checks "
    "every fact of its answer against that evidence. Call diagnose for a checked answer; its "
    "sentences carry the ids of the claims they state. To check claims of your own, gather "
    "evidence with the query_* tools (each call is recorded in an agent session) and submit them "
    "with check_claims: each binding gets a decision and the rule behind it."
)


@dataclass(frozen=True)
class McpUseCases:
    """What the MCP front end stands on: the use cases the gRPC servicers get, over the same store."""

    chat: ChatUseCase
    check: CheckUseCase
    traces: TraceUseCase
    feedback: FeedbackUseCase
    cases: CaseUseCase
    queries: AgentQueryUseCase
    limits: inputs.Limits
    runbooks: Path | None = None  # the knowledge directory: *.md runbooks
    viewer_url: str | None = None  # the web viewer, for trace links


def build_server(use: McpUseCases) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "evigate",
        instructions=INSTRUCTIONS,
        tools=[query_tool(spec, use.queries) for spec in use.queries.tools()],
        log_level="WARNING",
    )
    _diagnosis_tools(server, use)
    _read_tools(server, use)
    _resources(server, use)
    return server


def _diagnosis_tools(server: MCPServer[Any], use: McpUseCases) -> None:
    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def diagnose(
        question: str, language: Literal["zh", "en"] | None = None, session_id: str | None = None
    ) -> JSON:
        """Runs the evidence-gated pipeline on a question. Returns the answer as sentences with
        the ids of the claims they state, the verdict (PASS / LOW_CONFID / REJECT), the claims with
        their citations, the session id and the trace's resource URI. A session id already
        finished returns its stored answer."""
        inputs.require(inputs.question(question, use.limits) + inputs.session_id(session_id, required=False))
        with as_tool_errors():
            # no language asked for: the use case answers in the question's
            request = ChatInput(question, session_id or None, language or "", Deadline.none())
            outcome = await use.chat.run(request)
            await use.chat.deliver(outcome, None)
        return present.diagnosis(outcome, use.viewer_url)

    @server.tool(annotations=READ)
    async def check_claims(session_id: str, evidence: inputs.Evidence) -> JSON:
        """The Gatekeeper: judges claims (executor_evidence_v2) against the tool calls recorded in
        a session, e.g. an agent session of query_* calls. Returns the decision (NONE: all
        citations hold; REJECT: at least one does not) and, per claim and binding, its decision
        and the rule that decided it."""
        inputs.require(inputs.session_id(session_id) + inputs.evidence(evidence, use.limits))
        with as_tool_errors():
            return present.check(await use.check.check(session_id, evidence.model_dump))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True))
    async def feedback(
        session_id: str, value: Literal["useful", "not_useful"], note: str | None = None
    ) -> JSON:
        """Marks an answer useful (it becomes a case of the case library) or not useful. The note
        is kept with the session: its trace shows it as session.extras.feedback_note."""
        problems = inputs.session_id(session_id)
        if note is not None and len(note) > inputs.MAX_NOTE_CHARS:
            problems.append(f"note: at most {inputs.MAX_NOTE_CHARS} characters")
        inputs.require(problems)
        with as_tool_errors():
            outcome = await use.feedback.submit(session_id, value, note)
        return {"session_id": session_id, "feedback": value, "case_id": outcome.case_id}


def _read_tools(server: MCPServer[Any], use: McpUseCases) -> None:
    @server.tool(annotations=READ)
    async def get_trace(session_id: str) -> JSON:
        """A session's whole trace: question, plan, every tool call with its result, each
        Verifier round (claims, Gatekeeper result, verdict), the answer and its feedback."""
        inputs.require(inputs.session_id(session_id))
        with as_tool_errors():
            return await use.traces.get(session_id, present.trace)

    @server.tool(annotations=READ)
    async def list_sessions(
        feedback: Literal["useful", "not_useful"] | None = None,
        status: Literal["RUNNING", "SUCCESS", "FAILED", "AGENT"] | None = None,
        limit: int = 20,
        page_token: str | None = None,
    ) -> JSON:
        """Sessions, newest first, one page; pass next_page_token back for the next one."""
        size, problems = inputs.page_size(limit)
        inputs.require(problems + inputs.page_token(page_token))
        with as_tool_errors():
            sessions, token = await use.traces.list_sessions(feedback, status, size, page_token or None)
        return {"sessions": [present.session(s) for s in sessions], "next_page_token": token}

    @server.tool(annotations=READ)
    async def list_cases(
        fault_category: str | None = None,
        service: str | None = None,
        error_code: str | None = None,
        include_retired: bool = False,
        limit: int = 50,
    ) -> JSON:
        """The case library: answers marked useful, with their fault category, error code,
        services and alert names. Filters are exact; empty means any."""
        size, problems = inputs.page_size(limit)
        inputs.require(problems + inputs.case_filters(
            fault_category=fault_category, service=service, error_code=error_code
        ))  # fmt: skip
        with as_tool_errors():
            found = await use.cases.list(
                fault_category or None, service or None, error_code or None, include_retired, size
            )
        return {"cases": [present.case(c) for c in found]}


def _resources(server: MCPServer[Any], use: McpUseCases) -> None:
    @server.resource("evigate://sessions/{session_id}/trace", name="trace", mime_type="application/json")
    async def trace(session_id: str) -> str:
        """A session's stored trace (what get_trace returns)."""
        if inputs.session_id(session_id):
            raise ResourceError(f"not a session id: {session_id!r}")
        try:
            record = await use.traces.get(session_id, present.trace)
        except SessionNotFound:
            raise ResourceError(f"no session {session_id}") from None
        return json.dumps(record, ensure_ascii=False)

    @server.resource("evigate://tools/catalog", name="tool-catalog", mime_type="application/json")
    def tool_catalog() -> str:
        """The evidence tools: arguments, how a result is cited, which claim types may cite it."""
        return json.dumps(catalog(use.queries), ensure_ascii=False)

    @server.resource("evigate://runbooks/{name}", name="runbook", mime_type="text/markdown")
    def runbook(name: str) -> str:
        """A runbook of the knowledge base, by file name (see evigate://runbooks)."""
        files = _runbooks(use.runbooks)
        if name not in files:
            raise ResourceError(f"no runbook {name!r}; see evigate://runbooks")
        return files[name].read_text(encoding="utf-8")

    @server.resource("evigate://runbooks", name="runbooks", mime_type="application/json")
    def runbook_index() -> str:
        """The runbooks' names and resource URIs."""
        return json.dumps(
            [{"name": n, "uri": f"evigate://runbooks/{n}"} for n in sorted(_runbooks(use.runbooks))]
        )


def _runbooks(directory: Path | None) -> dict[str, Path]:
    if directory is None or not directory.is_dir():
        return {}
    return {path.name: path for path in directory.glob("*.md") if path.is_file()}
