"""k8s_rollout_history: a deployment's ReplicaSets by revision, newest first, with the image, env
and config changes from the revision before and when each was created: what changed, and when."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import MatchLevel, ToolName
from evigate.server.sources.kubernetes.query import closest
from evigate.server.sources.kubernetes.rollouts import history, namespaces_of
from evigate.server.tools import args as tool_args
from evigate.server.tools.backend import JSON, ToolBackend
from evigate.server.tools.cluster_access import cluster_state, object_line
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 10, 100


def revision_text(item: Mapping[str, Any]) -> str:
    """catalog/catalog revision=2: replicaset=catalog-6f7b9c8d2, created=…, changes=[image …]"""
    return object_line(item, ("deployment",))


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    state = await cluster_state(backend, "Deployment", "ReplicaSet")
    name, namespace = args["deployment"], args.get("namespace")
    found = [ns for ns in namespaces_of(state, name) if namespace in {None, ns}]
    if not found:
        return Answer([], 0, notes={"closest": ", ".join(closest(state, name)) or "none"})
    entries = [entry for ns in found for entry in history(state, ns, name)]
    return Answer(entries[: args.get("limit", DEFAULT_LIMIT)], len(entries), MatchLevel.L0)


TOOL = Tool(
    name=ToolName.K8S_ROLLOUT_HISTORY,
    description=(
        "A Kubernetes deployment's rollout history from the cluster source: its ReplicaSets by "
        "revision, newest first, each with its images, replicas, when it was created, whether it is "
        "current, and the image / env / envFrom / resources / config volume changes from the "
        "revision before. Use it for 'what changed' and 'was it rolled back'."
    ),
    properties={
        "deployment": {**tool_args.STRING, "description": "deployment name"},
        "namespace": {**tool_args.STRING, "description": "exact namespace"},
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="revisions",
    item_text=revision_text,
    no_evidence_message="没有这个 Deployment 的发布记录",
    query_keys=("deployment", "namespace"),
    required=("deployment",),
)
