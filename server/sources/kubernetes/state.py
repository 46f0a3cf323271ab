"""What the cluster source knows at one moment: objects by kind, the files it could not read, and
where each pod's logs are. Objects stay as the API prints them (JSON, slimmed: dump.py), but for
events, the most numerous by far, kept as compact records from the moment they are read; the
reading is in summary.py, events.py and rollouts.py."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evigate.server.sources.kubernetes.kinds import WORKLOADS

JSON = dict[str, Any]
MAX_OWNER_LINKS = 4  # Pod → ReplicaSet → Deployment; Pod → Job → CronJob


@dataclass(frozen=True)
class Unread:
    """A part of the cluster that could not be read, and why: a broken file, a 403, a timeout."""

    what: str
    reason: str


@dataclass(frozen=True, slots=True)
class Event:
    """What the tools show of one event (events.py adds its object's workload), in either form the
    API writes (core/v1 or events.k8s.io). Its strings are shared with every other event that says
    the same: the namespace, object, reason and message repeat across thousands."""

    namespace: str
    kind: str  # of the object it is about
    name: str
    type: Any  # as the API wrote it: Normal | Warning
    reason: Any
    message: str  # on one line
    count: int
    first: datetime | None
    last: datetime | None


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


def _shared(value: Any) -> Any:
    return sys.intern(value) if isinstance(value, str) else value


def compact_event(raw: Mapping[str, Any]) -> Event:
    involved = raw.get("involvedObject") or raw.get("regarding") or {}
    first, last = times(raw)
    series = raw.get("series") or {}
    return Event(
        namespace=sys.intern(str(involved.get("namespace") or meta(raw).get("namespace") or "")),
        kind=sys.intern(str(involved.get("kind", ""))),
        name=sys.intern(str(involved.get("name", ""))),
        type=_shared(raw.get("type", "")),
        reason=_shared(raw.get("reason", "")),
        message=sys.intern(" ".join(str(raw.get("message") or raw.get("note") or "").split())),
        count=int(raw.get("count") or series.get("count") or 1),
        first=first,
        last=last,
    )


@dataclass
class ClusterState:
    objects: dict[str, list[JSON]] = field(default_factory=lambda: defaultdict(list))  # not events
    events: list[Event] = field(default_factory=list)
    unread: list[Unread] = field(default_factory=list)
    # (namespace, pod) → the dump's logs.txt
    pod_logs: dict[tuple[str, str], Path] = field(default_factory=dict)
    # kinds the source could not list at all (403, timeout): a query of them could not check
    unavailable: dict[str, str] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  # what readers derive once per state
    _index: dict[tuple[str, str, str], JSON] | None = None
    # (kind, namespace, name) → its workload: every pod's is asked by summaries, events, names, logs
    _workloads: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)

    def add(self, kind: str, item: JSON) -> None:
        if kind == "Event":
            self.events.append(compact_event(item))
            self.memo.clear()
            return
        self.objects[kind].append(item)
        self._index = None
        self._workloads.clear()
        self.memo.clear()

    def of(self, kind: str) -> list[JSON]:
        return self.objects.get(kind, [])

    def count(self) -> int:
        return sum(len(items) for items in self.objects.values()) + len(self.events)

    def get(self, kind: str, namespace: str, name: str) -> JSON | None:
        if self._index is None:
            self._index = {
                (k, meta(o).get("namespace", ""), meta(o).get("name", "")): o
                for k, items in self.objects.items()
                for o in items
            }
        return self._index.get((kind, namespace, name))

    def namespaces(self) -> list[str]:
        found = {meta(o).get("namespace", "") for items in self.objects.values() for o in items}
        found.update(e.namespace for e in self.events)
        return sorted(n for n in found if n)

    def workload_of(self, kind: str, namespace: str, name: str) -> tuple[str, str]:
        """The workload at the top of an object's owner chain (Pod → ReplicaSet → Deployment),
        or the object itself when it has no controller this source knows."""
        asked = (kind, namespace, name)
        known = self._workloads.get(asked)
        if known is None:
            known = self._workloads[asked] = self._workload_of(kind, namespace, name)
        return known

    def _workload_of(self, kind: str, namespace: str, name: str) -> tuple[str, str]:
        seen = 0
        while seen < MAX_OWNER_LINKS:
            item = self.get(kind, namespace, name)
            owner = controller(item) if item is not None else None
            if owner is None:
                break
            kind, name = owner
            seen += 1
            if kind in WORKLOADS and self.get(kind, namespace, name) is None:
                break
        return kind, name

    def workloads(self) -> Iterator[tuple[str, str, str]]:
        """(kind, namespace, name) of every workload no other workload owns."""
        for kind in WORKLOADS:
            for item in self.of(kind):
                if controller(item) is None:
                    yield kind, meta(item).get("namespace", ""), meta(item).get("name", "")


def meta(item: Mapping[str, Any]) -> JSON:
    value = item.get("metadata")
    return value if isinstance(value, dict) else {}


def dash_prefixes(name: str) -> list[str]:
    """`a-b-c` → `a`, `a-b`: the names `n` that it starts `n-` with (its workload's, its ReplicaSet's)."""
    return [name[:i] for i, ch in enumerate(name) if ch == "-" and i]


def controller(item: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of the owner reference marked controller (else the first one)."""
    owners = [o for o in meta(item).get("ownerReferences") or [] if isinstance(o, dict)]
    chosen = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    if chosen is None:
        return None
    return str(chosen.get("kind", "")), str(chosen.get("name", ""))
