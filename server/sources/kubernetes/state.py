"""What the cluster source knows at one moment: objects by kind, the files it could not read, and
where each pod's logs are. Objects stay as the API prints them (JSON); the reading is in summary.py,
events.py and rollouts.py."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
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


@dataclass
class ClusterState:
    objects: dict[str, list[JSON]] = field(default_factory=lambda: defaultdict(list))
    unread: list[Unread] = field(default_factory=list)
    # (namespace, pod) → the dump's logs.txt
    pod_logs: dict[tuple[str, str], Path] = field(default_factory=dict)
    # kinds the source could not list at all (403, timeout): a query of them could not check
    unavailable: dict[str, str] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)  # what readers derive once per state
    released: dict[str, int] = field(default_factory=dict)  # kind → objects a reader holds instead
    _index: dict[tuple[str, str, str], JSON] | None = None

    def add(self, kind: str, item: JSON) -> None:
        self.objects[kind].append(item)
        self._index = None
        self.memo.clear()

    def of(self, kind: str) -> list[JSON]:
        return self.objects.get(kind, [])

    def count(self) -> int:
        return sum(len(items) for items in self.objects.values()) + sum(self.released.values())

    def release(self, kind: str) -> list[JSON]:
        """Hands a kind's objects to a reader that keeps what it needs of them (events.py): the
        state no longer holds them, and still counts them."""
        items = self.objects.pop(kind, [])
        self.released[kind] = self.released.get(kind, 0) + len(items)
        return items

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
        return sorted(n for n in found if n)

    def workload_of(self, kind: str, namespace: str, name: str) -> tuple[str, str]:
        """The workload at the top of an object's owner chain (Pod → ReplicaSet → Deployment),
        or the object itself when it has no controller this source knows."""
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


def controller(item: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of the owner reference marked controller (else the first one)."""
    owners = [o for o in meta(item).get("ownerReferences") or [] if isinstance(o, dict)]
    chosen = next((o for o in owners if o.get("controller")), owners[0] if owners else None)
    if chosen is None:
        return None
    return str(chosen.get("kind", "")), str(chosen.get("name", ""))
