"""Events as the tools show them: reason, type, message, count, first and last time and the object
they are about, a pod's events rolled up to its workload. Both forms are read: core/v1
(`firstTimestamp`, `lastTimestamp`, `count`) and events.k8s.io as the scheduler writes it
(`eventTime`, `series`, null first / last times)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


@dataclass
class _Index:
    """Every event's item, Warnings first and newest first, and where to start looking: by object
    or workload name, by namespace, and per type the items in that order with their last times."""

    ordered: list[tuple[JSON, datetime | None]]
    by_name: dict[str, list[int]]
    by_namespace: dict[str, list[int]]
    by_type: dict[str, list[int]]  # lowercased type → its items, newest first


def _index(state: ClusterState) -> _Index:
    if "events" not in state.memo:
        # The index keeps what the tools show of each event; the raw events are let go.
        raw = state.release("Event")
        raw.reverse()
        rows = []
        while raw:  # each raw event freed as its row is made: the two are never all held at once
            event = raw.pop()
            rows.append((item(state, event), times(event)[1]))
        rows.sort(key=lambda r: (r[0]["type"] != "Warning", -(r[1].timestamp() if r[1] else 0.0)))
        by_name: dict[str, list[int]] = {}
        by_namespace: dict[str, list[int]] = {}
        by_type: dict[str, list[int]] = {}
        for i, (found, _last) in enumerate(rows):
            by_namespace.setdefault(found["namespace"], []).append(i)
            by_type.setdefault(str(found["type"]).lower(), []).append(i)
            names = {found["object"].split("/", 1)[1], str(found.get("workload", "/")).split("/", 1)[1]}
            for name in names - {""}:
                by_name.setdefault(name, []).append(i)
        state.memo["events"] = _Index(rows, by_name, by_namespace, by_type)
    index: _Index = state.memo["events"]
    return index


def select(state: ClusterState, f: EventFilter) -> list[JSON]:
    """The events that pass the filter, Warnings first, newest first within each type."""
    index = _index(state)
    candidates: Sequence[int]
    newest_first = False  # candidates of one type, newest first: the window's start ends the scan
    if f.obj:
        # an exact name, or a workload's name as the prefix of its pods' names
        keys = [n for n in index.by_name if n == f.obj or n.startswith(f"{f.obj}-")]
        candidates = sorted({i for n in keys for i in index.by_name[n]})
    elif f.namespace:
        candidates = index.by_namespace.get(f.namespace, [])
    elif f.type:
        candidates, newest_first = index.by_type.get(f.type.lower(), []), True
    else:
        candidates = range(len(index.ordered))
    out = []
    for i in candidates:
        found, last = index.ordered[i]
        if newest_first and f.since is not None and last is not None and last < f.since:
            break
        if _matches(found, last, f):
            out.append(found)
    return out
