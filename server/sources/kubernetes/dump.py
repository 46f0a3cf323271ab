"""Reading a cluster dump: the tree `kubectl cluster-info dump --all-namespaces --output-directory`
writes (nodes.json; per namespace events.json, pods.json, deployments.json, … and <pod>/logs.txt)
and any directory of `kubectl get -o json` files (a List of any kinds, or one object).

A file that cannot be read (truncated JSON, not a List) is skipped and named in the state's `unread`,
never the whole source lost; kinds this source does not read are passed over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evigate.server.sources.kubernetes.kinds import kind_of
from evigate.server.sources.kubernetes.state import ClusterState, Unread, meta

MAX_DEPTH = 4  # root / namespace / pod / logs.txt, and one level of grouping above


def read_dump(root: Path) -> ClusterState:
    """Every object and pod log under `root`."""
    if not root.is_dir():
        raise FileNotFoundError(f"cluster dump {root} is not a directory")
    state = ClusterState()
    for path in sorted(root.rglob("*")):
        if len(path.relative_to(root).parts) > MAX_DEPTH or not path.is_file():
            continue
        if path.name == "logs.txt":
            state.pod_logs[(path.parent.parent.name, path.parent.name)] = path
        elif path.suffix == ".json":
            _read_file(state, path, root)
    return state


def _read_file(state: ClusterState, path: Path, root: Path) -> None:
    where = str(path.relative_to(root))
    try:
        document = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        state.unread.append(Unread(where, f"not readable as JSON: {exc}"))
        return
    if not isinstance(document, dict):
        state.unread.append(Unread(where, "not a Kubernetes object or List"))
        return
    read = add_document(state, document, default_kind=kind_of(path.stem))
    if read is None:
        state.unread.append(Unread(where, "not a Kubernetes object or List"))


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def slim(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    """The object without what no reader reads and what costs memory: managed fields, kubectl's
    last-applied copy, a pod's volumes, tolerations and mounts (an event is kept as a compact
    record: state.compact_event)."""
    m = meta(item)
    m.pop("managedFields", None)
    (m.get("annotations") or {}).pop(LAST_APPLIED, None)
    if kind == "Pod":
        spec = item.get("spec") or {}
        for key in ("volumes", "tolerations"):
            spec.pop(key, None)
        for c in spec.get("containers") or []:
            c.pop("volumeMounts", None)
        for s in (item.get("status") or {}).get("containerStatuses") or []:
            s.pop("volumeMounts", None)
    return item


def add_document(state: ClusterState, document: dict[str, Any], default_kind: str | None) -> int | None:
    """Adds a List's items (typed `PodList` or kubectl's mixed `List`) or one object; returns how
    many were added, or None when the document is neither. Items of a typed List carry no `kind`."""
    outer = str(document.get("kind", ""))
    items = document.get("items")
    if isinstance(items, list):
        list_kind = kind_of(outer) if outer != "List" else None
        added = 0
        for item in items:
            if not isinstance(item, dict):
                continue
            kind = kind_of(str(item.get("kind", ""))) or list_kind or default_kind
            if kind is not None and meta(item).get("name"):
                state.add(kind, slim(kind, item))
                added += 1
        return added
    kind = kind_of(outer)
    if kind is not None and meta(document).get("name"):
        state.add(kind, slim(kind, document))
        return 1
    return None if kind is None and "metadata" not in document else 0
