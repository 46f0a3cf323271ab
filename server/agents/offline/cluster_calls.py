"""The cluster calls a question asks for, when a cluster source is configured: the pods, workloads
and namespaces it names (a pod stands for its workload; "the payments namespace" is a namespace,
not a service) and the Kubernetes words it uses, in Chinese or English (一直重启 / crash loop,
拉不到镜像 / image pull, 调度不上 / Pending, 内存超限 / OOMKilled, 探针失败 / probe failing,
回滚了吗 / what changed, 节点 / node).

A named object gets its status (query_k8s) and its events (query_k8s_events), and a deployment its
rollout history when the question asks what changed; a pod-shaped name the cluster does not have is
asked for anyway, so that the answer names the closest names instead of guessing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.sources.kubernetes.names import ClusterNames, Place, cluster_names
from evigate.server.sources.ports import ClusterSource

MAX_OBJECTS = 2
_TOKEN = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")
_POD_SHAPED = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+){2,}\b")
_NAMESPACE_MARK = re.compile(r"(?:namespace|命名空间|名字空间|\bns\b)", re.IGNORECASE)

# topic → words (lowercased substrings) that ask about it
TOPICS: dict[str, tuple[str, ...]] = {
    "crash": ("crash", "restart", "一直重启", "重启", "崩溃", "backoff"),
    "image": ("image", "镜像", "errimagepull"),
    "pending": ("pending", "schedul", "调度", "起不来", "unschedulable"),
    "memory": ("oom", "memory", "内存"),
    "probe": ("probe", "liveness", "readiness", "探针", "健康检查"),
    "change": ("what changed", "changed", "rollout", "roll back", "rolled back", "rollback", "回滚",
               "变更", "改了什么", "发布", "deploy"),
    "node": ("node", "节点"),
    "job": ("job", "任务", "cronjob"),
    "scale": ("hpa", "autoscal", "scale", "扩容", "副本"),
    "volume": ("pvc", "volume", "storage", "存储", "卷", "disk", "磁盘"),
    "config": ("configmap", "secret", "config", "配置"),
    "kubernetes": ("pod", "k8s", "kubernetes", "cluster", "集群", "容器", "container", "deployment",
                   "statefulset", "daemonset"),
}  # fmt: skip
KINDS_OF_TOPIC = {"node": "node", "job": "job", "scale": "hpa", "volume": "pvc"}


def topics(question: str) -> list[str]:
    text = question.lower()
    return [topic for topic, words in TOPICS.items() if any(w in text for w in words)]


def mentions(question: str, names: ClusterNames) -> tuple[list[Place], list[str], list[str]]:
    """The objects the question names (workloads before pods of them), the namespaces it names,
    and the pod-shaped names the cluster does not have."""
    text = question.lower()
    objects: list[Place] = []
    namespaces: list[str] = []
    unknown: list[str] = []
    for token in _TOKEN.findall(text):
        places = names.places.get(token, [])
        if token in names.namespaces and token not in namespaces:
            namespaces.append(token)
        for place in places:
            if place not in objects and place.kind != "Node":
                objects.append(place)
        if not places and token not in names.namespaces and _POD_SHAPED.fullmatch(token):
            unknown.append(token)
    # a name that is both a namespace and a workload: a namespace when the question says so
    said_namespace = bool(_NAMESPACE_MARK.search(question))
    if said_namespace:
        objects = [p for p in objects if p.name not in namespaces or p.kind == "Pod"]
    else:
        namespaces = [n for n in namespaces if n not in {p.name for p in objects}] or namespaces
    return objects, namespaces, unknown


def _subjects(objects: Sequence[Place], namespaces: Sequence[str]) -> list[tuple[str, str]]:
    """(workload or object name, namespace): a pod stands for its workload."""
    out: list[tuple[str, str]] = []
    for place in objects:
        if namespaces and place.namespace not in namespaces:
            continue
        key = (place.workload or place.name, place.namespace)
        if key not in out:
            out.append(key)
    return out[:MAX_OBJECTS]


def plan(question: str, names: ClusterNames | None) -> list[PlannedCall]:
    """The cluster calls of a question (none without a cluster or a Kubernetes subject)."""
    if names is None:
        return []
    objects, namespaces, unknown = mentions(question, names)
    asked = topics(question)
    calls: list[PlannedCall] = []
    subjects = _subjects(objects, namespaces)
    deployments = {(p.name, p.namespace) for p in objects if p.kind == "Deployment"}
    deployments |= {(p.workload, p.namespace) for p in objects if p.kind == "Pod" and p.workload}
    for name, namespace in subjects:
        scope = {"namespace": namespace} if namespace else {}
        calls.append(PlannedCall(ToolName.QUERY_K8S, {"name": name, **scope}, name, purpose="survey"))
        calls.append(
            PlannedCall(ToolName.QUERY_K8S_EVENTS, {"object": name, **scope}, name, purpose="survey")
        )
        if "change" in asked and (name, namespace) in deployments:
            arguments = {"deployment": name, **scope}
            calls.append(PlannedCall(ToolName.K8S_ROLLOUT_HISTORY, arguments, name, purpose="survey"))
    if not subjects:
        for namespace in namespaces[:MAX_OBJECTS]:
            problems: dict[str, Any] = {"namespace": namespace, "problems_only": True}
            calls.append(PlannedCall(ToolName.QUERY_K8S, problems, purpose="survey"))
            events = {"namespace": namespace, "type": "Warning"}
            calls.append(PlannedCall(ToolName.QUERY_K8S_EVENTS, events, purpose="survey"))
    for name in unknown[: MAX_OBJECTS if not calls else 0]:
        calls.append(PlannedCall(ToolName.QUERY_K8S, {"name": name}, name, purpose="catalog"))
    for topic, kind in KINDS_OF_TOPIC.items():
        if topic in asked and not subjects and not namespaces:
            calls.append(
                PlannedCall(ToolName.QUERY_K8S, {"kind": kind, "problems_only": True}, purpose="survey")
            )
    if not calls and asked and set(asked) - {"change", "config"}:
        # Kubernetes words and no name: what is wrong anywhere in the cluster
        calls.append(
            PlannedCall(ToolName.QUERY_K8S, {"kind": "pod", "problems_only": True}, purpose="survey")
        )
        calls.append(PlannedCall(ToolName.QUERY_K8S_EVENTS, {"type": "Warning"}, purpose="survey"))
    return calls


async def names_of(cluster: ClusterSource | None) -> ClusterNames | None:
    """The cluster's names, or None without a cluster or when it cannot be read (its tools then
    report that themselves)."""
    if cluster is None:
        return None
    try:
        return cluster_names(await cluster.state())
    except Exception:
        return None


def merged(
    planned: Sequence[PlannedCall], cluster: Sequence[PlannedCall], names: ClusterNames | None
) -> list[PlannedCall]:
    """The cluster calls first, then the others, without catalog look-ups of names the cluster has
    (a pod or namespace is not an unknown service)."""
    if not cluster or names is None:
        return list(planned)

    def known(name: str | None) -> bool:
        lowered = (name or "").lower()
        return (
            lowered in names.places
            or lowered in names.namespaces
            or any(lowered.startswith(f"{known}-") for known in names.places)
        )

    rest = [c for c in planned if not (c.tool_name == ToolName.LIST_SERVICES and known(c.service))]
    return [*cluster, *rest]
