"""query_k8s_events: Kubernetes events — reason, type, message, count, first and last time and the
object, a pod's events rolled up to its workload — Warnings first, newest first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import MatchLevel, ToolName
from evigate.server.sources.kubernetes.events import EventFilter, select
from evigate.server.tools import args as tool_args
from evigate.server.tools.backend import JSON, ToolBackend
from evigate.server.tools.cluster_access import cluster_state, object_line, unread_note
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 20, 500


def event_text(item: Mapping[str, Any]) -> str:
    """Warning BackOff payments/…: object=Pod/payments-…, workload=Deployment/payments, message=…, count=54"""
    return object_line(item, ("type", "reason"))


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    state = await cluster_state(backend, "Event")
    window = tool_args.window(args, backend.now())
    f = EventFilter(
        namespace=args.get("namespace"),
        obj=args.get("object"),
        reason=args.get("reason"),
        type=args.get("type"),
        since=window.since,
        until=window.until,
    )
    found = select(state, f)
    if not found:
        return Answer([], 0, window=window, notes=unread_note(state))
    shown = [e.item() for e in found[: args.get("limit", DEFAULT_LIMIT)]]
    return Answer(shown, len(found), MatchLevel.L0, window=window)


TOOL = Tool(
    name=ToolName.QUERY_K8S_EVENTS,
    description=(
        "Kubernetes events from the cluster source: type, reason, message, count, first and last "
        "time, the object and, for a pod's events, its workload. Warnings first, newest first. "
        "`object` is a pod or workload name (a workload's name finds its pods' events)."
    ),
    properties={
        "namespace": {**tool_args.STRING, "description": "exact namespace"},
        "object": {**tool_args.STRING, "description": "pod or workload name"},
        "reason": {**tool_args.STRING, "description": "e.g. BackOff, FailedScheduling, Unhealthy"},
        "type": {"type": "string", "enum": ["Normal", "Warning"]},
        **tool_args.WINDOW,
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="events",
    item_text=event_text,
    no_evidence_message="没有匹配的 Kubernetes 事件",
    query_keys=("namespace", "object", "reason", "type"),
)
