"""Reading a cluster dump: the tree `kubectl cluster-info dump --all-namespaces --output-directory`
writes (nodes.json; per namespace events.json, pods.json, deployments.json, … and <pod>/logs.txt)
and any directory of `kubectl get -o json` files (a List of any kinds, or one object).

A file that cannot be read (truncated JSON, not a List) is skipped and named in the state's `unread`,
never the whole source lost; kinds this source does not read are passed over."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
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
    for path in _files(root):
        if path.name == "logs.txt":
            state.pod_logs[(path.parent.parent.name, path.parent.name)] = path
        elif path.suffix == ".json":
            _read_file(state, path, root)
    return state


def _files(root: Path) -> list[Path]:
    """The files at most MAX_DEPTH levels under root, in the order of their paths (os.walk, not
    rglob: a dump holds a folder per pod)."""
    found = []
    for folder, dirs, names in os.walk(root):
        depth = len(Path(folder).relative_to(root).parts)
        if depth + 1 >= MAX_DEPTH:
            dirs.clear()  # a file below would be deeper than MAX_DEPTH
        found += [Path(folder, name) for name in names]
    return sorted(path for path in found if path.is_file())


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
# Kinds whose pod template is read: a ReplicaSet's for its rollout, a workload's for its images.
TEMPLATED = frozenset(
    {"ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "ReplicationController", "Job"}
)


_META = ("name", "namespace", "uid", "labels", "annotations", "ownerReferences", "creationTimestamp")
_POD_STATUS_DROPPED = ("hostIP", "hostIPs", "podIP", "podIPs", "qosClass", "startTime", "resize")
_CONTAINER_STATUS = ("name", "ready", "restartCount", "state", "lastState", "image", "started")
# What a rollout can change in a pod template (rollouts.shape): kept of a ReplicaSet's containers.
_TEMPLATE_CONTAINER = ("name", "image", "env", "envFrom", "resources")


def _only(item: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: item[k] for k in keys if k in item}


def _config_volumes(spec: Mapping[str, Any]) -> list[Any]:
    return [
        v for v in spec.get("volumes") or [] if isinstance(v, dict) and ({"configMap", "secret"} & v.keys())
    ]


def slim(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    """What the readers read of an object (summary.py, rollouts.py, podlogs.py), not what costs
    memory and says nothing about what is wrong: managed fields, kubectl's last-applied copy, a pod
    spec's volumes, probes, commands and env (its containers' names and images stay), IPs; a
    ReplicaSet's template keeps what a rollout changes, a workload's its containers' images. An
    event is kept as a compact record (state.compact_event)."""
    m = meta(item)
    m.pop("managedFields", None)
    (m.get("annotations") or {}).pop(LAST_APPLIED, None)
    if kind == "Pod":
        spec = item.get("spec") or {}
        status = item.get("status") or {}
        for key in ("containers", "initContainers"):
            if isinstance(spec.get(key), list):
                spec[key] = [_only(c, ("name", "image")) for c in spec[key] if isinstance(c, dict)]
        item["spec"] = _only(spec, ("containers", "initContainers", "nodeName", "nodeSelector"))
        for key in ("containerStatuses", "initContainerStatuses"):
            if isinstance(status.get(key), list):
                status[key] = [_only(c, _CONTAINER_STATUS) for c in status[key] if isinstance(c, dict)]
        for key in _POD_STATUS_DROPPED:
            status.pop(key, None)
        m.pop("annotations", None)  # no reader reads a pod's
    elif kind in TEMPLATED:
        template = ((item.get("spec") or {}).get("template") or {}).get("spec")
        if isinstance(template, dict):
            kept = _TEMPLATE_CONTAINER if kind == "ReplicaSet" else ("name", "image")
            containers = [_only(c, kept) for c in template.get("containers") or [] if isinstance(c, dict)]
            item["spec"]["template"]["spec"] = {"containers": containers}
            if kind == "ReplicaSet":
                item["spec"]["template"]["spec"]["volumes"] = _config_volumes(template)
    item["metadata"] = _only(m, _META)
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
