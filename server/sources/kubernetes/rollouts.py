"""A deployment's rollout history: its ReplicaSets by revision, the image, env and config changes
between each and the one before, and when each was created. Env values that come from a Secret or
a ConfigMap are named by reference only; no Secret is ever read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.server.sources.kubernetes.state import JSON, ClusterState, controller, meta
from evigate.server.sources.kubernetes.summary import when

REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"


def _pod_spec(item: Mapping[str, Any]) -> JSON:
    spec = ((item.get("spec") or {}).get("template") or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _env_value(var: Mapping[str, Any]) -> str:
    if "value" in var:
        return str(var["value"])
    source = var.get("valueFrom") or {}
    for key, label in (("secretKeyRef", "secret"), ("configMapKeyRef", "configmap")):
        ref = source.get(key)
        if isinstance(ref, dict):
            return f"<{label} {ref.get('name')}/{ref.get('key')}>"
    return "<from field>"


def shape(item: Mapping[str, Any]) -> JSON:
    """What a rollout can change in a ReplicaSet's pod template: per container its image, env,
    envFrom and resources, and the config volumes."""
    spec = _pod_spec(item)
    containers = {}
    for c in spec.get("containers") or []:
        containers[str(c.get("name"))] = {
            "image": c.get("image", ""),
            "env": {str(v.get("name")): _env_value(v) for v in c.get("env") or []},
            "env_from": sorted(
                f"{k.removesuffix('Ref')} {ref.get('name')}"
                for source in c.get("envFrom") or []
                for k, ref in source.items()
                if isinstance(ref, dict)
            ),
            "resources": c.get("resources") or {},
        }
    volumes = sorted(
        f"{key} {ref.get('name') or ref.get('secretName')}"
        for v in spec.get("volumes") or []
        for key, ref in v.items()
        if key in {"configMap", "secret"} and isinstance(ref, dict)
    )
    return {"containers": containers, "volumes": volumes}


def changes(before: JSON, after: JSON) -> list[str]:
    """Readable differences: `image app: shop:1.4 → shop:1.5`, `env app.DB_HOST: a → b`."""
    out: list[str] = []
    for name, c in after["containers"].items():
        old = before["containers"].get(name)
        if old is None:
            out.append(f"container {name} added ({c['image']})")
            continue
        if old["image"] != c["image"]:
            out.append(f"image {name}: {old['image']} → {c['image']}")
        for key in sorted(set(old["env"]) | set(c["env"])):
            a, b = old["env"].get(key, "(unset)"), c["env"].get(key, "(unset)")
            if a != b:
                out.append(f"env {name}.{key}: {a} → {b}")
        if old["env_from"] != c["env_from"]:
            out.append(f"envFrom {name}: {old['env_from']} → {c['env_from']}")
        if old["resources"] != c["resources"]:
            out.append(f"resources {name}: {old['resources']} → {c['resources']}")
    out.extend(
        f"container {name} removed" for name in before["containers"] if name not in after["containers"]
    )
    if before["volumes"] != after["volumes"]:
        out.append(f"volumes: {before['volumes']} → {after['volumes']}")
    return out


def _revision(item: Mapping[str, Any]) -> int:
    return int(meta(item).get("annotations", {}).get(REVISION, 0) or 0)


def _replicasets(state: ClusterState) -> dict[tuple[str, str], list[JSON]]:
    """(namespace, deployment) → its ReplicaSets by revision; read once per state."""
    if "replicasets" not in state.memo:
        owned: dict[tuple[str, str], list[JSON]] = {}
        for rs in state.of("ReplicaSet"):
            owner = controller(rs)
            if owner is not None and owner[0] == "Deployment":
                owned.setdefault((meta(rs).get("namespace", ""), owner[1]), []).append(rs)
        for items in owned.values():
            items.sort(key=_revision)
        state.memo["replicasets"] = owned
    found: dict[tuple[str, str], list[JSON]] = state.memo["replicasets"]
    return found


def namespaces_of(state: ClusterState, deployment: str) -> list[str]:
    """The namespaces that hold a deployment of that name, in the order the state read them."""
    if "deployments" not in state.memo:
        by_name: dict[str, list[str]] = {}
        for d in state.of("Deployment"):
            by_name.setdefault(meta(d).get("name", ""), []).append(meta(d).get("namespace", ""))
        state.memo["deployments"] = by_name
    found: dict[str, list[str]] = state.memo["deployments"]
    return found.get(deployment, [])


def index(state: ClusterState) -> None:
    """The ReplicaSets by deployment and the deployments by name, built now."""
    _replicasets(state)
    namespaces_of(state, "")


def history(state: ClusterState, namespace: str, deployment: str) -> list[JSON]:
    """The deployment's revisions, newest first, each with its changes from the one before."""
    owned = _replicasets(state).get((namespace, deployment), [])
    current = state.get("Deployment", namespace, deployment)
    current_revision = (meta(current).get("annotations", {}) if current else {}).get(REVISION)
    out: list[JSON] = []
    previous: JSON | None = None
    for rs in owned:
        m = meta(rs)
        now = shape(rs)
        revision = _revision(rs)
        entry: JSON = {
            "deployment": f"{namespace}/{deployment}",
            "revision": revision,
            "replicaset": m.get("name", ""),
            "created": when(m.get("creationTimestamp")),
            "images": [c["image"] for c in now["containers"].values()],
            "replicas": int((rs.get("status") or {}).get("replicas") or 0),
            "current": str(revision) == str(current_revision),
        }
        cause = m.get("annotations", {}).get(CHANGE_CAUSE)
        if cause:
            entry["change_cause"] = cause
        entry["changes"] = changes(previous, now) if previous is not None else ["first revision"]
        out.append(entry)
        previous = now
    return out[::-1]
