"""The kinds of object the cluster source reads, and the names a user, a file or a List gives them."""

from __future__ import annotations

# kind → (plural, short names). The plural is the dump's file name and the API's resource name.
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Pod": ("pods", ("pod", "po")),
    "Event": ("events", ("event", "ev")),
    "Deployment": ("deployments", ("deployment", "deploy")),
    "ReplicaSet": ("replicasets", ("replicaset", "rs")),
    "StatefulSet": ("statefulsets", ("statefulset", "sts")),
    "DaemonSet": ("daemonsets", ("daemonset", "ds")),
    "ReplicationController": ("replication-controllers", ("replicationcontrollers", "rc")),
    "Job": ("jobs", ("job",)),
    "CronJob": ("cronjobs", ("cronjob", "cj")),
    "Node": ("nodes", ("node", "no")),
    "PersistentVolumeClaim": ("persistentvolumeclaims", ("persistentvolumeclaim", "pvc")),
    "HorizontalPodAutoscaler": ("horizontalpodautoscalers", ("horizontalpodautoscaler", "hpa")),
    "Service": ("services", ("service", "svc")),
    "Endpoints": ("endpoints", ("ep",)),
    "ConfigMap": ("configmaps", ("configmap", "cm")),
    "StorageClass": ("storageclasses", ("storageclass", "sc")),
    "Namespace": ("namespaces", ("namespace", "ns")),
}

# Workloads: what a pod's owner chain ends in.
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController")
# Kinds a query about "what is wrong" lists besides pods.
STATUS_KINDS = (
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "HorizontalPodAutoscaler",
    "PersistentVolumeClaim",
    "Node",
)

_BY_NAME: dict[str, str] = {}
for _kind, (_plural, _short) in KINDS.items():
    for _name in (_kind, _plural, *_short):
        _BY_NAME[_name.lower()] = _kind


def kind_of(name: str) -> str | None:
    """`pods`, `po`, `Pod`, `PodList`, `hpa` → the kind; None for a kind this source does not read."""
    key = name.strip().lower()
    if key.endswith("list") and key[:-4] in _BY_NAME:
        return _BY_NAME[key[:-4]]
    return _BY_NAME.get(key)


def plural(kind: str) -> str:
    return KINDS[kind][0]
