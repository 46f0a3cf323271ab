"""Events as the tools show them: reason, type, message, count, first and last time and the object
they are about, a pod's events rolled up to its workload, indexed once per state. Both forms are
read (state.compact_event): core/v1 (`firstTimestamp`, `lastTimestamp`, `count`) and events.k8s.io
as the scheduler writes it (`eventTime`, `series`, null first / last times)."""

from __future__ import annotations

import bisect
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from evigate.server.sources.kubernetes.state import JSON, ClusterState, Event, dash_prefixes
from evigate.server.sources.kubernetes.summary import when


@dataclass(frozen=True)
class EventFilter:
    namespace: str | None = None
    obj: str | None = None  # a name, matched against the object and its workload
    reason: str | None = None
    type: str | None = None  # Normal | Warning
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True, slots=True)
class Found:
    """An event with its object's workload (`Kind/name`; empty: the object is its own)."""

    event: Event
    workload: str

    def item(self) -> JSON:
        """The event as a tool's item (its ref text is written from it)."""
        e = self.event
        out: JSON = {"namespace": e.namespace, "object": f"{e.kind}/{e.name}"}
        if self.workload:
            out["workload"] = self.workload
        out["type"] = e.type
        out["reason"] = e.reason
        out["message"] = e.message
        out["count"] = e.count
        if e.first is not None:
            out["first"] = when(e.first.isoformat())
        if e.last is not None:
            out["last"] = when(e.last.isoformat())
        return out


def _found(state: ClusterState, e: Event) -> Found:
    kind, name = state.workload_of(e.kind, e.namespace, e.name)
    return Found(e, sys.intern(f"{kind}/{name}") if (kind, name) != (e.kind, e.name) else "")


def _matches(found: Found, f: EventFilter) -> bool:
    e = found.event
    if f.namespace and e.namespace != f.namespace:
        return False
    if f.reason and str(e.reason).lower() != f.reason.lower():
        return False
    if f.type and str(e.type).lower() != f.type.lower():
        return False
    if f.obj:
        names = [e.name, found.workload.split("/", 1)[1] if found.workload else ""]
        if not any(n == f.obj or n.startswith(f"{f.obj}-") for n in names):
            return False
    last = e.last
    if last is not None and f.since is not None and last < f.since:
        return False
    return not (last is not None and f.until is not None and last > f.until)


@dataclass
class _Index:
    """Every event, Warnings first and newest first, and where to start looking: by object or
    workload (namespace, name) and by each name's prefixes up to a dash, by namespace, and per type
    the events in that order with their last times."""

    ordered: list[Found]
    by_key: dict[tuple[str, str], list[int]]  # (namespace, object or workload name) → its events
    by_prefix: dict[str, list[tuple[str, str]]]  # a name or its prefix up to a dash → the keys
    by_namespace: dict[str, list[int]]
    by_type: dict[str, list[int]]  # lowercased type → its events, newest first
    stamps: dict[str, list[float]]  # lowercased type → minus each one's last time (0: none), ascending


def _stamp(found: Found) -> float:
    return found.event.last.timestamp() if found.event.last else 0.0


def _index(state: ClusterState) -> _Index:
    if "events" not in state.memo:
        rows = [_found(state, e) for e in state.events]
        rows.sort(key=lambda r: (r.event.type != "Warning", -_stamp(r)))
        by_key: dict[tuple[str, str], list[int]] = {}
        by_namespace: dict[str, list[int]] = {}
        by_type: dict[str, list[int]] = {}
        stamps: dict[str, list[float]] = {}
        for i, found in enumerate(rows):
            e = found.event
            by_namespace.setdefault(e.namespace, []).append(i)
            kind = str(e.type).lower()
            by_type.setdefault(kind, []).append(i)
            stamps.setdefault(kind, []).append(-_stamp(found))
            names = {e.name, found.workload.split("/", 1)[1] if found.workload else ""}
            for name in names - {""}:
                by_key.setdefault((e.namespace, name), []).append(i)
        by_prefix: dict[str, list[tuple[str, str]]] = {}
        for key in by_key:
            for prefix in (key[1], *dash_prefixes(key[1])):
                by_prefix.setdefault(prefix, []).append(key)
        state.memo["events"] = _Index(rows, by_key, by_prefix, by_namespace, by_type, stamps)
    index: _Index = state.memo["events"]
    return index


def index(state: ClusterState) -> None:
    """The events' index, built now."""
    _index(state)


def _of_type(index: _Index, f: EventFilter) -> Sequence[int]:
    """The items of the filter's type inside its window, found by their last times (newest first):
    past the window's start the scan stops (unless every timed item is inside: then the items
    without a time, last in the order, are kept), and items after its end are passed over."""
    kind = str(f.type).lower()
    found = index.by_type.get(kind, [])
    stamps = index.stamps.get(kind, [])
    end = len(found)
    if f.since is not None:
        cut = bisect.bisect_right(stamps, -f.since.timestamp())
        if cut < bisect.bisect_left(stamps, 0.0):
            end = cut
    start = bisect.bisect_left(stamps, -f.until.timestamp()) if f.until is not None else 0
    return found[start:end]


def select(state: ClusterState, f: EventFilter) -> list[Found]:
    """The events that pass the filter, Warnings first, newest first within each type (a tool
    shows the first few as items: `Found.item`)."""
    index = _index(state)
    candidates: Sequence[int]
    if f.obj:
        # an exact name, or a workload's name as the prefix of its pods' names
        keys = [k for k in index.by_prefix.get(f.obj, []) if not f.namespace or k[0] == f.namespace]
        if len(keys) == 1:
            candidates = index.by_key[keys[0]]
        else:
            candidates = sorted({i for k in keys for i in index.by_key[k]})
    elif f.namespace:
        candidates = index.by_namespace.get(f.namespace, [])
    elif f.type:  # only the reason is left to check
        ordered = index.ordered
        found = [ordered[i] for i in _of_type(index, f)]
        if f.reason:
            return [e for e in found if str(e.event.reason).lower() == f.reason.lower()]
        return found
    else:
        candidates = range(len(index.ordered))
    ordered = index.ordered
    return [ordered[i] for i in candidates if _matches(ordered[i], f)]
