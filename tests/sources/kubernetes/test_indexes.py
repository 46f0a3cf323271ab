"""The indexes the queries start from find exactly what a pass over every summary and every event
finds: by name (an object's own, its workload's, a prefix up to a dash), namespace, problems, type
and window, in the same order."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from evigate.server.sources.kubernetes.dump import read_dump
from evigate.server.sources.kubernetes.events import EventFilter, select
from evigate.server.sources.kubernetes.kinds import STATUS_KINDS
from evigate.server.sources.kubernetes.query import ObjectFilter, objects
from evigate.server.sources.kubernetes.state import ClusterState
from evigate.server.sources.kubernetes.summary import summarize
from tests.sources.kubernetes import objects as o

NAMES = [None, "payments", "cart", "cart-7d9f8b6c5d", "catalog", "nightly-report", "frontend", "worker-2"]
NAMESPACES = [None, "payments", "shop", "catalog", "frontend"]


def _named(summary: dict[str, Any], name: str) -> bool:
    """What `name` finds, as the query's specification says it."""
    own = str(summary.get("name", ""))
    related = {str(summary.get(k, "/")).split("/", 1)[1] for k in ("workload", "target")}
    if summary.get("kind") == "PersistentVolumeClaim" and re.search(rf"-{re.escape(name)}-\d+$", own):
        return True
    return name in {own, *related} or own.startswith(f"{name}-")


def _every_object(state: ClusterState, f: ObjectFilter) -> list[dict[str, Any]]:
    found = []
    for rank, kind in enumerate([f.kind] if f.kind else STATUS_KINDS):
        for item in state.of(kind):
            s = summarize(state, kind, item)
            if f.namespace and (kind == "Node" or s.get("namespace") != f.namespace):
                continue
            if (f.name and not _named(s, f.name)) or (f.problems_only and not s["problems"]):
                continue
            found.append((not s["problems"], rank, s.get("namespace", ""), s["name"], s))
    return [entry[-1] for entry in sorted(found, key=lambda e: e[:4])]


@pytest.fixture(scope="module")
def state(dump: Path) -> ClusterState:
    return read_dump(dump)


@pytest.mark.parametrize("kind", [None, "Pod", "Deployment", "PersistentVolumeClaim"])
@pytest.mark.parametrize("problems_only", [False, True])
def test_objects_by_index_are_those_of_a_full_pass(
    state: ClusterState, kind: str | None, problems_only: bool
) -> None:
    for name in NAMES:
        for namespace in NAMESPACES:
            f = ObjectFilter(kind, namespace, name, problems_only)
            assert objects(state, f) == _every_object(state, f), f


def _every_event(state: ClusterState, f: EventFilter) -> list[dict[str, Any]]:
    found = [e.item() for e in select(state, EventFilter())]  # every event, in the tools' order
    out = []
    for item, event in zip(found, select(state, EventFilter()), strict=True):
        names = [event.event.name, item.get("workload", "/").split("/", 1)[1]]
        last = event.event.last
        if (
            (f.namespace and item["namespace"] != f.namespace)
            or (f.reason and item["reason"].lower() != f.reason.lower())
            or (f.type and item["type"].lower() != f.type.lower())
            or (f.obj and not any(n == f.obj or n.startswith(f"{f.obj}-") for n in names))
            or (last is not None and f.since is not None and last < f.since)
            or (last is not None and f.until is not None and last > f.until)
        ):
            continue
        out.append(item)
    return out


@pytest.mark.parametrize("type_", [None, "Warning", "normal"])
@pytest.mark.parametrize("minutes", [None, 5, 30, 24 * 60])
def test_events_by_index_are_those_of_a_full_pass(
    state: ClusterState, type_: str | None, minutes: int | None
) -> None:
    since = o.NOW - timedelta(minutes=minutes) if minutes is not None else None
    for obj in [None, "payments", "inventory", "search", "catalog-5c8d7f9b4d", "worker-2", "nothing-here"]:
        for namespace in [None, "payments", "search", "inventory"]:
            for reason in [None, "BackOff", "failedscheduling"]:
                for until in [None, o.NOW - timedelta(minutes=2)]:
                    f = EventFilter(namespace, obj, reason, type_, since, until)
                    assert [e.item() for e in select(state, f)] == _every_event(state, f), f
