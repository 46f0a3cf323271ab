"""Kubernetes objects in the API's exact shape (checked against the OpenAPI by test_dump_shape.py),
built for the situations the cluster source must recognise. Times are RFC 3339 in UTC; uids are
derived from names so that trees are reproducible."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

JSON = dict[str, Any]
NOW = datetime(2026, 7, 8, 12, 0, tzinfo=UTC)
NODE = "worker-1"


def at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def uid(*names: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, "/".join(names)))


def metadata(namespace: str, name: str, minutes_ago: float = 120, **more: Any) -> JSON:
    out: JSON = {
        "name": name,
        "namespace": namespace,
        "uid": uid(namespace, name),
        "resourceVersion": "1000",
        "creationTimestamp": at(minutes_ago),
    }
    if not namespace:
        del out["namespace"]
    out.update(more)
    return out


def owner(kind: str, name: str, namespace: str, api: str = "apps/v1") -> JSON:
    return {
        "apiVersion": api,
        "kind": kind,
        "name": name,
        "uid": uid(namespace, name),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def container(name: str, image: str, **more: Any) -> JSON:
    return {
        "name": name,
        "image": image,
        "resources": {"limits": {"memory": "256Mi"}, "requests": {"memory": "128Mi"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
        **more,
    }


def container_status(name: str, image: str, state: JSON, last: JSON | None = None, restarts: int = 0) -> JSON:
    ready = "running" in state
    out: JSON = {
        "name": name,
        "state": state,
        "lastState": last or {},
        "ready": ready,
        "restartCount": restarts,
        "image": f"docker.io/library/{image}",
        "imageID": "",
        "started": ready,
    }
    if "running" in state or last:
        out["containerID"] = f"containerd://{uid(name, image).replace('-', '')}"
    return out


def running(minutes_ago: float = 100) -> JSON:
    return {"running": {"startedAt": at(minutes_ago)}}


def waiting(reason: str, message: str) -> JSON:
    return {"waiting": {"reason": reason, "message": message}}


def terminated(reason: str, exit_code: int, minutes_ago: float = 3, message: str | None = None) -> JSON:
    out: JSON = {
        "exitCode": exit_code,
        "reason": reason,
        "startedAt": at(minutes_ago + 0.5),
        "finishedAt": at(minutes_ago),
        "containerID": f"containerd://{uid(reason, str(minutes_ago)).replace('-', '')}",
    }
    if message:
        out["message"] = message
    return {"terminated": out}


def pod(
    namespace: str,
    name: str,
    containers: list[JSON],
    statuses: list[JSON],
    *,
    owner_rs: str | None = None,
    owner_job: str | None = None,
    phase: str = "Running",
    conditions: list[JSON] | None = None,
    node: str | None = NODE,
    labels: dict[str, str] | None = None,
) -> JSON:
    owners = []
    if owner_rs:
        owners.append(owner("ReplicaSet", owner_rs, namespace))
    if owner_job:
        owners.append(owner("Job", owner_job, namespace, "batch/v1"))
    meta = metadata(namespace, name, 90, labels=labels or {"app": name.rsplit("-", 2)[0]})
    if owners:
        meta["ownerReferences"] = owners
    spec: JSON = {
        "containers": containers,
        "restartPolicy": "Never" if owner_job else "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if node:
        spec["nodeName"] = node
    ready = all(s.get("ready") for s in statuses) and bool(statuses)
    status: JSON = {
        "phase": phase,
        "conditions": conditions
        or [
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": at(90)},
            {"type": "Ready", "status": str(ready), "lastProbeTime": None, "lastTransitionTime": at(89)},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": at(90)},
        ],
        "qosClass": "Burstable",
    }
    if node:
        status.update(hostIP="172.18.0.3", podIP="10.244.1.7", startTime=at(90))
    if statuses:
        status["containerStatuses"] = statuses
    return {"metadata": meta, "spec": spec, "status": status}


def template(app: str, containers: list[JSON]) -> JSON:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": containers,
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
        },
    }


def deployment(
    namespace: str, name: str, containers: list[JSON], *, ready: int, replicas: int = 1, revision: int = 1
) -> JSON:
    available = ready == replicas
    return {
        "metadata": metadata(
            namespace,
            name,
            240,
            generation=revision,
            annotations={"deployment.kubernetes.io/revision": str(revision)},
        ),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template(name, containers),
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        },
        "status": {
            "observedGeneration": revision,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            **({} if ready else {"unavailableReplicas": replicas - ready}),
            "conditions": [
                {
                    "type": "Available",
                    "status": str(available),
                    "lastUpdateTime": at(80),
                    "lastTransitionTime": at(80),
                    "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability."
                    if available
                    else "Deployment does not have minimum availability.",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "lastUpdateTime": at(80),
                    "lastTransitionTime": at(240),
                    "reason": "NewReplicaSetAvailable",
                    "message": f'ReplicaSet "{name}" has successfully progressed.',
                },
            ],
        },
    }


def replicaset(
    namespace: str,
    deployment_name: str,
    *,
    suffix: str,
    containers: list[JSON],
    revision: int,
    replicas: int,
    minutes_ago: float,
) -> JSON:
    name = f"{deployment_name}-{suffix}"
    meta = metadata(
        namespace,
        name,
        minutes_ago,
        labels={"app": deployment_name, "pod-template-hash": suffix},
        annotations={"deployment.kubernetes.io/revision": str(revision)},
        ownerReferences=[owner("Deployment", deployment_name, namespace)],
    )
    return {
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": deployment_name, "pod-template-hash": suffix}},
            "template": template(deployment_name, containers),
        },
        "status": {
            "replicas": replicas,
            "observedGeneration": 1,
            **({"readyReplicas": replicas} if replicas else {}),
        },
    }


def event(
    namespace: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    *,
    type_: str = "Warning",
    count: int = 1,
    first: float = 60,
    last: float = 1,
) -> JSON:
    api = "v1" if kind == "Pod" else "apps/v1" if kind != "Job" else "batch/v1"
    return {
        "metadata": metadata(namespace, f"{name}.{uid(reason, message)[:16].replace('-', '')}", first),
        "involvedObject": {
            "kind": kind,
            "namespace": namespace,
            "name": name,
            "uid": uid(namespace, name),
            "apiVersion": api,
        },
        "reason": reason,
        "message": message,
        "source": {"component": "kubelet", "host": NODE},
        "firstTimestamp": at(first),
        "lastTimestamp": at(last),
        "count": count,
        "type": type_,
        "eventTime": None,
        "reportingComponent": "kubelet",
        "reportingInstance": NODE,
    }


def node(name: str, pressure: str | None = None, ready: bool = True) -> JSON:
    conditions = []
    healthy = {
        "MemoryPressure": ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        "DiskPressure": ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        "PIDPressure": ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    }
    for kind, (reason, message) in healthy.items():
        hit = kind == pressure
        conditions.append(
            {
                "type": kind,
                "status": str(hit),
                "lastHeartbeatTime": at(1),
                "lastTransitionTime": at(30 if hit else 600),
                "reason": "KubeletHasInsufficientMemory" if hit else reason,
                "message": "kubelet has insufficient memory available" if hit else message,
            }
        )
    conditions.append(
        {
            "type": "Ready",
            "status": str(ready),
            "lastHeartbeatTime": at(1),
            "lastTransitionTime": at(600),
            "reason": "KubeletReady" if ready else "NodeStatusUnknown",
            "message": "kubelet is posting ready status" if ready else "Kubelet stopped posting node status.",
        }
    )
    capacity = {"cpu": "8", "memory": "16393216Ki", "pods": "110", "ephemeral-storage": "102626232Ki"}
    return {
        "metadata": metadata("", name, 6000, labels={"kubernetes.io/hostname": name}),
        "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]},
        "status": {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": conditions,
            "nodeInfo": {
                "machineID": "m",
                "systemUUID": "s",
                "bootID": "b",
                "kernelVersion": "6.8.0",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.18",
                "kubeletVersion": "v1.31.2",
                "kubeProxyVersion": "v1.31.2",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }
