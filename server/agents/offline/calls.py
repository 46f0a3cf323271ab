"""The exact tool calls a question asks for. Planner and Executor share this so the plan is what runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.entities import Entities
from evigate.server.agents.offline.vocabulary import LogTerm

# A narrow question names one or two targets; more services than this is not a narrow question.
MAX_SERVICES = 2


@dataclass(frozen=True)
class PlannedCall:
    """One tool call and what it is about (used to phrase the claim)."""

    tool_name: str
    arguments: dict[str, Any]
    service: str | None = None
    alert_name: str | None = None
    term: LogTerm | None = None
    level: str | None = None
    window_minutes: int | None = None


def _since(entities: Entities) -> str | None:
    """A window as the tools' relative form ("30m": thirty minutes before the world's now)."""
    if entities.window_minutes is None:
        return None
    minutes = entities.window_minutes
    if minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def knowledge_query(entities: Entities, question: str) -> str:
    """The lookup_knowledge query: the exact keys of the question, or the question itself."""
    keys = [*entities.alert_names, *(term.name for term in entities.log_terms)]
    return " ".join(keys) if keys else question.strip()


def plan_calls(entities: Entities, question: str) -> list[PlannedCall]:
    """Every call the question asks for, with arguments taken only from its entities."""
    calls: list[PlannedCall] = []
    services: list[str | None] = list(entities.services[:MAX_SERVICES]) or [None]
    since = _since(entities)
    window = entities.window_minutes

    if "alert" in entities.intents:
        alert_names: list[str | None] = list(entities.alert_names[:MAX_SERVICES]) or [None]
        for service in services:
            for alert_name in alert_names:
                arguments: dict[str, Any] = {}
                if service is not None:
                    arguments["service"] = service
                if alert_name is not None:
                    arguments["alert_name"] = alert_name
                if entities.alert_state is not None:
                    arguments["state"] = entities.alert_state
                if since is not None:
                    arguments["since"] = since
                if arguments:
                    calls.append(
                        PlannedCall(
                            ToolName.QUERY_METRICS, arguments, service, alert_name, window_minutes=window
                        )
                    )

    if "log" in entities.intents:
        terms: list[LogTerm | None] = list(entities.log_terms[:1]) or [None]
        for service in services:
            for term in terms:
                arguments = {}
                if service is not None:
                    arguments["service"] = service
                if entities.level is not None:
                    arguments["level"] = entities.level
                if term is not None:
                    arguments.update(term.arguments())
                if since is not None:
                    arguments["since"] = since
                # A log query with no service and no term is not a narrow question: ask, do not scan.
                if service is not None or term is not None:
                    calls.append(
                        PlannedCall(
                            ToolName.QUERY_LOGS,
                            arguments,
                            service,
                            term=term,
                            level=entities.level,
                            window_minutes=window,
                        )
                    )

    if entities.wants_guidance:
        calls.append(PlannedCall(ToolName.LOOKUP_KNOWLEDGE, {"query": knowledge_query(entities, question)}))
    return calls


def describe_call(call: PlannedCall) -> str:
    """`query_logs(service=order-service, pattern=...)`, for plan steps and messages."""
    rendered = ", ".join(f"{key}={value}" for key, value in call.arguments.items())
    return f"{call.tool_name}({rendered})"
