"""query_k8s: Kubernetes objects with the status that matters — pods (phase, readiness, each
container's state and last state with reason, exit code and signal, restarts, image, node, owner
workload), deployments / statefulsets / daemonsets, nodes, jobs, HPA and PVC; those with problems
first. A workload's name finds its pods too; a name nothing has answers with the closest names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import MatchLevel, ToolName
from evigate.server.sources.kubernetes.kinds import KINDS, STATUS_KINDS, kind_of
from evigate.server.sources.kubernetes.logtail import tail
from evigate.server.sources.kubernetes.query import ObjectFilter, closest, objects
from evigate.server.tools import args as tool_args
from evigate.server.tools.args import ArgumentError
from evigate.server.tools.backend import JSON, ToolBackend
from evigate.server.tools.cluster_access import cluster_of, cluster_state, object_line, unread_note
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 20, 500


def object_text(item: Mapping[str, Any]) -> str:
    """Pod orders/orders-7d9f8b6c5d-x2x4q: problems=[CrashLoopBackOff; OOMKilled], phase=Running, …"""
    return object_line(item, ("kind",))


def clean_argument(key: str, text: str) -> str:
    if key == "kind":
        kind = kind_of(text)
        if kind is None or kind not in KINDS:
            raise ArgumentError(f"unknown kind {text!r}; known: {', '.join(STATUS_KINDS)}")
        return kind
    return text


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    kind = args.get("kind")
    state = await cluster_state(backend, *([kind] if kind else ["Pod"]))
    f = ObjectFilter(kind, args.get("namespace"), args.get("name"), bool(args.get("problems_only")))
    found = objects(state, f)
    if not found:
        notes = unread_note(state)
        if f.name:
            notes["closest"] = ", ".join(closest(state, f.name)) or "none"
        return Answer([], 0, notes=notes)
    limit = args.get("limit", DEFAULT_LIMIT)
    shown = found[:limit]
    if f.name:  # a named workload's pods with problems: what their containers last wrote
        shown = [await _with_tail(backend, item) for item in shown]
    return Answer(shown, len(found), MatchLevel.L0)


async def _with_tail(backend: ToolBackend, item: JSON) -> JSON:
    cluster = cluster_of(backend)
    if item.get("kind") != "Pod" or not item.get("problems") or cluster is None:
        return item
    lines = await tail(cluster, item.get("namespace", ""), item["name"], bool(item.get("restarts")))
    return {**item, "log_tail": lines} if lines else item


TOOL = Tool(
    name=ToolName.QUERY_K8S,
    description=(
        "Kubernetes objects with their status from the cluster source (a cluster dump or the API): "
        "pods (phase, ready, each container's state and last state with reason, exit code, signal "
        "and finish time, restarts, waiting reasons such as CrashLoopBackOff or ImagePullBackOff, "
        "image, node, owner workload), deployments, statefulsets, daemonsets, nodes (conditions, "
        "allocatable), jobs, HPA (current / desired / max replicas, metrics) and PVC. `problems` "
        "lists what is wrong in the API's words; objects with problems come first. `name` may be a "
        "workload's name (its pods are included) or a pod's."
    ),
    properties={
        "kind": {**tool_args.STRING, "description": "pod, deployment, statefulset, node, job, hpa, pvc, …"},
        "namespace": {**tool_args.STRING, "description": "exact namespace"},
        "name": {**tool_args.STRING, "description": "object or workload name"},
        "problems_only": {"type": "boolean", "description": "only objects with problems"},
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="objects",
    item_text=object_text,
    no_evidence_message="集群中没有匹配的对象",
    query_keys=("kind", "namespace", "name"),
    clean=clean_argument,
)
