"""The exact tool calls a question asks for. Planner and Executor share this so the plan is what runs."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.tool_hooks import planned_arguments
from evigate.server.sources.retrieval import sections
from evigate.server.understanding.change import asks_change
from evigate.server.understanding.entities import Entities
from evigate.server.understanding.statements import states_a_problem
from evigate.server.understanding.vocabulary import LogTerm

# A narrow question names one or two targets; more services than this is not a narrow question.
MAX_SERVICES = 2
MAX_TERMS = 3  # a compound question's log terms, each searched on its own
MAX_NAMESPACE_SERVICES = 8  # a namespace's services gathered for a question about the namespace
SURVEY_WINDOW = "1h"  # a broad question looks at the last hour
# Words that pull a runbook's procedure block (its steps, its commands) ahead of its other sections.
STEPS_QUERY = "steps procedure resolution remediation mitigation commands 步骤 处理 处置 操作 命令"
SUMMARIZE_LOGS = "summarize_logs"
QUERY_PROMQL = "query_promql"


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
    # "catalog" (is this service known?) | "survey" | "list" (every item quoted: "list the errors")
    # | "problem" (the runbook for a problem the question states: quoted only when one is found)
    # | "" (the question's own query)
    purpose: str = ""


def _since(entities: Entities) -> str | None:
    """A window as the tools' relative form ("30m": thirty minutes before the world's now), or the
    start of a time of day's window ("06:00")."""
    if entities.clock is not None:
        return entities.clock[0]
    if entities.window_minutes is None:
        return None
    minutes = entities.window_minutes
    if minutes % 1440 == 0:
        return f"{minutes // 1440}d"
    if minutes % 60 == 0:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def _window(entities: Entities, default: str | None = None) -> dict[str, str]:
    """`since` (and, for a time of day's window, `until`) of a query, else `default` as `since`."""
    since = _since(entities) or default
    out = {"since": since} if since is not None else {}
    if entities.clock is not None:
        out["until"] = entities.clock[1]
    return out


def knowledge_query(entities: Entities, question: str) -> str:
    """The lookup_knowledge query: the exact keys of the question (and, for a question about what
    to do, the words of a procedure section), or the question itself."""
    keys = [*entities.alert_names, *(term.name for term in entities.log_terms)]
    if not keys:
        return question.strip()
    intent = sections.intent_of(question)
    if not entities.wants_steps and intent is None:
        return " ".join(keys)
    # The alert names find the runbook; the intent's words pick its section (a symptom's own words
    # would pick the block that describes the symptom instead).
    words = STEPS_QUERY if intent in (None, "fix") else sections.INTENT_QUERY[intent]
    return " ".join([*(entities.alert_names or keys), words])


def plan_calls(entities: Entities, question: str, available: Collection[str] = ()) -> list[PlannedCall]:
    """Every call the question asks for, with arguments taken only from its entities.

    A service no source knows is looked up in the catalog (list_services: the answer names the
    closest known services) and queried no further; it is never replaced by another service and
    never widened to all services. `available`: the registered tools (a survey uses what exists)."""
    calls: list[PlannedCall] = [
        PlannedCall(ToolName.LIST_SERVICES, {"name": name}, name, purpose="catalog")
        for name in entities.unknown_services[:MAX_SERVICES]
    ]
    if entities.unknown_services and not entities.services:
        return calls
    if entities.namespace_services and not entities.services:
        return calls + namespace_calls(entities, available)
    history = asks_change(question) is not None
    if entities.survey:
        return calls + survey_calls(entities, available, history=history)
    calls.extend(_narrow_calls(entities, question, available))
    service = entities.services[0] if entities.services else None
    calls.extend(
        PlannedCall(name, args, service) for name, args in planned_arguments(question, entities.services)
    )
    summarized = any(call.tool_name == SUMMARIZE_LOGS for call in calls)
    if history and service is not None and SUMMARIZE_LOGS in available and not summarized:
        # "since when?" / "what changed?": the service's templates over all its logs, with their
        # first times and the rare events (a reload, a restart, a new version starting)
        arguments = {"service": service, "level": "WARN", **_window(entities)}
        calls.append(PlannedCall(SUMMARIZE_LOGS, arguments, service, level="WARN", purpose="survey"))
    return calls


def survey_calls(
    entities: Entities, available: Collection[str], *, history: bool = False
) -> list[PlannedCall]:
    """A broad question's checks per service: its alerts in every state, its log patterns at WARN
    and above (summarize_logs where registered, else its ERROR lines), its log lines for the
    question's symptoms. Key signals (query_promql) and runbooks follow from what these find.
    `history` ("since when?", "what changed?"): the logs are read over all they hold, not the last hour."""
    calls: list[PlannedCall] = []
    window = _window(entities, None if history else SURVEY_WINDOW)
    for service in entities.services[:MAX_SERVICES]:
        calls.append(PlannedCall(ToolName.QUERY_METRICS, {"service": service}, service, purpose="survey"))
        if SUMMARIZE_LOGS in available:
            arguments = {"service": service, "level": "WARN", **window}
            calls.append(PlannedCall(SUMMARIZE_LOGS, arguments, service, level="WARN", purpose="survey"))
        else:
            arguments = {"service": service, "level": "ERROR", **window}
            calls.append(
                PlannedCall(ToolName.QUERY_LOGS, arguments, service, level="ERROR", purpose="survey")
            )
        for term in entities.log_terms[:MAX_TERMS]:
            arguments = {"service": service, **term.arguments(), **window}
            calls.append(PlannedCall(ToolName.QUERY_LOGS, arguments, service, term=term, purpose="survey"))
    return calls


def namespace_calls(entities: Entities, available: Collection[str]) -> list[PlannedCall]:
    """A question about a namespace ("which services in booking log errors?", "payments 命名空间有哪些
    告警？"): each of its services' alerts (unless only logs are asked) and log patterns (unless only
    alerts are), over the question's window or the survey's, widened as a survey's."""
    calls: list[PlannedCall] = []
    window = _window(entities, SURVEY_WINDOW)
    only_alerts = "alert" in entities.intents and "log" not in entities.intents
    # "which services log errors?" names a level: its logs only ("有什么异常" asks for everything)
    only_logs = entities.level is not None and "alert" not in entities.intents
    level = entities.level or "WARN"
    for service in entities.namespace_services[:MAX_NAMESPACE_SERVICES]:
        if not only_logs:
            arguments: dict[str, Any] = {"service": service}
            if entities.alert_state is not None or entities.current:
                arguments["state"] = "firing"
            calls.append(PlannedCall(ToolName.QUERY_METRICS, arguments, service, purpose="survey"))
        if only_alerts:
            continue
        if SUMMARIZE_LOGS in available:
            arguments = {"service": service, "level": level, **window}
            calls.append(PlannedCall(SUMMARIZE_LOGS, arguments, service, level=level, purpose="survey"))
        else:
            arguments = {"service": service, "level": "ERROR", **window}
            calls.append(
                PlannedCall(ToolName.QUERY_LOGS, arguments, service, level="ERROR", purpose="survey")
            )
    return calls


def _listing_calls(entities: Entities, available: Collection[str]) -> list[PlannedCall]:
    """ "Summarize the errors in X's logs", "show me X's logs", "列出 X 日志里所有不同的错误": every
    distinct template of each service's logs at the level asked (every level when none is), each
    quoted (purpose "list"), over the question's window or all the logs hold."""
    if SUMMARIZE_LOGS not in available or not entities.listing or entities.log_terms:
        return []
    if "log" not in entities.intents:
        return []
    calls = []
    for service in entities.services[:MAX_SERVICES]:
        arguments: dict[str, Any] = {"service": service, **_window(entities)}
        if entities.level is not None:
            arguments["level"] = entities.level
        calls.append(
            PlannedCall(
                SUMMARIZE_LOGS,
                arguments,
                service,
                level=entities.level,
                window_minutes=entities.window_minutes,
                purpose="list",
            )
        )
    return calls


def _narrow_calls(entities: Entities, question: str, available: Collection[str] = ()) -> list[PlannedCall]:
    calls: list[PlannedCall] = []
    services: list[str | None] = list(entities.services[:MAX_SERVICES]) or [None]
    span = _window(entities)
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
                if arguments:
                    arguments.update(span)
                    calls.append(
                        PlannedCall(
                            ToolName.QUERY_METRICS, arguments, service, alert_name, window_minutes=window
                        )
                    )

    listing = _listing_calls(entities, available)
    calls.extend(listing)
    # A listing at a level stands for the level's lines; "show me the logs" also quotes the newest.
    if "log" in entities.intents and not (listing and entities.level is not None):
        terms: list[LogTerm | None] = list(entities.log_terms[:MAX_TERMS]) or [None]
        for service in services:
            for term in terms:
                arguments = {}
                if service is not None:
                    arguments["service"] = service
                if entities.level is not None:
                    arguments["level"] = entities.level
                if term is not None:
                    arguments.update(term.arguments())
                arguments.update(span)
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
    elif ToolName.LOOKUP_KNOWLEDGE in available and states_a_problem(question, entities):
        # "Database connection timeouts are occurring for X": the runbook for that problem, found by
        # the statement itself (retrieval ranks it; an unrelated one is not returned).
        query = {"query": question.strip()}
        calls.append(PlannedCall(ToolName.LOOKUP_KNOWLEDGE, query, purpose="problem"))
    return calls


def describe_call(call: PlannedCall) -> str:
    """`query_logs(service=order-service, pattern=...)`, for plan steps and messages."""
    rendered = ", ".join(f"{key}={value}" for key, value in call.arguments.items())
    return f"{call.tool_name}({rendered})"


def with_signal_calls(
    calls: list[PlannedCall], signal: list[PlannedCall], entities: Entities, asks_value: bool
) -> list[PlannedCall]:
    """The signal's calls first. A question that asks for the value (`asks_value`: "多少", "what
    is") is answered by them: no alert query that only its words suggested (a paraphrase; an alert
    the question names stays), no log lines it did not ask for. A question about a state or a time
    ("is it slow?", "when did it run out of heap?") keeps both: a firing alert and the line that
    says when are its answer as much as the value."""
    if not signal or not asks_value:
        return [*signal, *calls]
    if entities.paraphrased:
        calls = [call for call in calls if call.tool_name != ToolName.QUERY_METRICS]
    if not entities.asks_log:
        # "X 的消息堆积现在多少？" asks for the value: its symptom's log lines are not asked for.
        calls = [call for call in calls if call.tool_name != ToolName.QUERY_LOGS]
    return [*signal, *calls]
