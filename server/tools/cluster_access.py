"""How the cluster tools reach the cluster source, and how they show a cluster object on one line.

The backend (a SourceSet) holds the configured clusters as its `cluster` capability; a backend
with none, or a kind the cluster could not list (403, timeout), is a call that could not
check (ToolError), never one that found nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.server.sources.kubernetes.state import ClusterState
from evigate.server.sources.ports import ClusterSource
from evigate.server.tools import refs
from evigate.server.tools.backend import ToolBackend, ToolError

NO_CLUSTER = "no cluster source configured (--kube-dump DIR or --kubeconfig FILE)"


def cluster_of(backend: ToolBackend) -> ClusterSource | None:
    clusters: tuple[ClusterSource, ...] = getattr(backend, "cluster", ())
    return clusters[0] if clusters else None


async def cluster_state(backend: ToolBackend, *kinds: str) -> ClusterState:
    """The cluster's state; ToolError when there is no cluster or one of `kinds` could not be listed."""
    cluster = cluster_of(backend)
    if cluster is None:
        raise ToolError(NO_CLUSTER)
    try:
        state = await cluster.state()
    except (OSError, ValueError) as exc:
        raise ToolError(f"could not read the cluster at {cluster.where}: {exc}") from exc
    for kind in kinds:
        if kind in state.unavailable:
            raise ToolError(f"could not check {kind} objects: {state.unavailable[kind]}")
    return state


def unread_note(state: ClusterState) -> dict[str, str]:
    """What a no-evidence ref says of the parts of the cluster that could not be read."""
    if not state.unread:
        return {}
    return {"could_not_read": "; ".join(f"{u.what}: {u.reason}" for u in state.unread[:5])}


def _value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "(" + ", ".join(f"{k}={_value(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list):
        return "[" + "; ".join(_value(v) for v in value) + "]"
    return refs.text(value)


def object_line(item: Mapping[str, Any], head: tuple[str, ...]) -> str:
    """`Pod payments/payments-7d9f…: problems=[CrashLoopBackOff], phase=Running, …` with every field."""
    name = "/".join(refs.text(item[k]) for k in ("namespace", "name") if k in item)
    lead = " ".join([*(refs.text(item[k]) for k in head if k in item), name]).strip()
    rest = [f"{k}={_value(v)}" for k, v in item.items() if k not in {*head, "namespace", "name"}]
    return f"{lead}: {', '.join(rest)}" if rest else lead
