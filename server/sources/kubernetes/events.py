"""Events as the tools show them: reason, type, message, count, first and last time and the object
they are about, a pod's events rolled up to its workload. Both forms are read: core/v1
(`firstTimestamp`, `lastTimestamp`, `count`) and events.k8s.io as the scheduler writes it
(`eventTime`, `series`, null first / last times)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from evigate.server.sources.kubernetes.state import JSON, ClusterState, meta
from evigate.server.sources.kubernetes.summary import when


@dataclass(frozen=True)
class EventFilter:
    namespace: str | None = None
    obj: str | None = None  # a name, matched against the object and its workload
    reason: str | None = None
    type: str | None = None  # Normal | Warning
    since: datetime | None = None
    until: datetime | None = None


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def times(event: Mapping[str, Any]) -> tuple[datetime | None, datetime | None]:
    """The first and last time an event was seen, whichever form it was written in."""
    series = event.get("series") or {}
    first = _moment(event.get("firstTimestamp")) or _moment(event.get("eventTime"))
    last = (
        _moment(event.get("lastTimestamp"))
        or _moment(series.get("lastObservedTime"))
        or first
        or _moment(meta(event).get("creationTimestamp"))
    )
    return first or last, last


def item(state: ClusterState, event: Mapping[str, Any]) -> JSON:
    involved = event.get("involvedObject") or event.get("regarding") or {}
    namespace = str(involved.get("namespace") or meta(event).get("namespace") or "")
    kind, name = str(involved.get("kind", "")), str(involved.get("name", ""))
    first, last = times(event)
    series = event.get("series") or {}
    out: JSON = {
        "namespace": namespace,
        "object": f"{kind}/{name}",
    }
    workload_kind, workload_name = state.workload_of(kind, namespace, name)
    if (workload_kind, workload_name) != (kind, name):
        out["workload"] = f"{workload_kind}/{workload_name}"
    out["type"] = event.get("type", "")
    out["reason"] = event.get("reason", "")
    out["message"] = " ".join(str(event.get("message") or event.get("note") or "").split())
    out["count"] = int(event.get("count") or series.get("count") or 1)
    if first is not None:
        out["first"] = when(first.isoformat())
    if last is not None:
        out["last"] = when(last.isoformat())
    return out


def _matches(found: JSON, last: datetime | None, f: EventFilter) -> bool:
    if f.namespace and found["namespace"] != f.namespace:
        return False
    if f.reason and found["reason"].lower() != f.reason.lower():
        return False
    if f.type and str(found["type"]).lower() != f.type.lower():
        return False
    if f.obj:
        names = [found["object"].split("/", 1)[1], str(found.get("workload", "/")).split("/", 1)[1]]
        if not any(n == f.obj or n.startswith(f"{f.obj}-") for n in names):
            return False
    if last is not None and f.since is not None and last < f.since:
        return False
    return not (last is not None and f.until is not None and last > f.until)


def select(state: ClusterState, f: EventFilter) -> list[JSON]:
    """The events that pass the filter, Warnings first, newest first within each type."""
    if "events" not in state.memo:
        state.memo["events"] = [(item(state, event), times(event)[1]) for event in state.of("Event")]
    chosen: list[tuple[bool, float, JSON]] = []
    for found, last in state.memo["events"]:
        if _matches(found, last, f):
            chosen.append((found["type"] != "Warning", -(last.timestamp() if last else 0.0), found))
    chosen.sort(key=lambda entry: (entry[0], entry[1]))
    return [entry[2] for entry in chosen]
