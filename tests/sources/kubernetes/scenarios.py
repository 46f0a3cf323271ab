"""The situations of clusters.py's table, built."""

from __future__ import annotations

from pathlib import Path

from tests.sources.kubernetes import objects as o
from tests.sources.kubernetes.clusters import Cluster

SCHEDULER = (
    "0/2 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint "
    "{node-role.kubernetes.io/control-plane: }. preemption: 0/2 nodes are available: "
    "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
)
PULL_FAILED = (
    'Failed to pull image "registry.example.com/checkout:2.4.1-rc0": rpc error: code = NotFound desc = '
    'failed to pull and unpack image "registry.example.com/checkout:2.4.1-rc0": not found'
)
CRASH_LOG = (
    "2026-07-08T11:58:01Z INFO starting payments worker\n"
    "2026-07-08T11:58:02Z ERROR cannot connect to ledger-db:5432: connection refused\n"
    "Traceback (most recent call last):\n"
    '  File "/app/worker.py", line 42, in <module>\n'
    "ConnectionRefusedError: [Errno 111] Connection refused"
)


def _situations(c: Cluster) -> None:
    c.app(
        "payments",
        "payments",
        "payments:3.2.0",
        o.waiting(
            "CrashLoopBackOff",
            "back-off 5m0s restarting failed container=payments pod=payments-7d9f8b6c5d-x2x4q_payments(0)",
        ),
        last=o.terminated("Error", 1, 2),
        restarts=12,
        events=(
            (
                "BackOff",
                "Back-off restarting failed container payments in pod payments-7d9f8b6c5d-x2x4q_payments(0)",
                "Warning",
                54,
            ),
        ),
        log=CRASH_LOG,
    )
    c.app(
        "orders",
        "orders",
        "orders:1.8.2",
        o.waiting(
            "CrashLoopBackOff",
            "back-off 2m40s restarting failed container=orders pod=orders-7d9f8b6c5d-x2x4q_orders(0)",
        ),
        last=o.terminated("OOMKilled", 137, 1),
        restarts=7,
        events=(
            (
                "BackOff",
                "Back-off restarting failed container orders in pod orders-7d9f8b6c5d-x2x4q_orders(0)",
                "Warning",
                31,
            ),
        ),
    )
    c.app(
        "checkout",
        "checkout",
        "registry.example.com/checkout:2.4.1-rc0",
        o.waiting("ImagePullBackOff", 'Back-off pulling image "registry.example.com/checkout:2.4.1-rc0"'),
        events=(
            (
                "Failed",
                PULL_FAILED,
                "Warning",
                6,
            ),
            ("Failed", "Error: ImagePullBackOff", "Warning", 40),
        ),
    )
    pending = [
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": o.at(20),
            "reason": "Unschedulable",
            "message": SCHEDULER,
        },
    ]
    pod = c.app("search", "search", "search:5.0.1", {}, phase="Pending", conditions=pending, node=None)
    c.add(
        "events",
        {
            **o.event("search", "Pod", pod, "FailedScheduling", SCHEDULER, count=14),
            "source": {"component": "default-scheduler"},
            "reportingComponent": "default-scheduler",
            "reportingInstance": "",
        },
    )
    c.app(
        "inventory",
        "inventory",
        "inventory:2.1.0",
        o.running(50),
        ready=False,
        events=(
            ("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", "Warning", 118),
        ),
    )
    config_spec = o.container(
        "billing", "billing:4.0.0", envFrom=[{"configMapRef": {"name": "billing-config"}}]
    )
    c.app(
        "billing",
        "billing",
        "billing:4.0.0",
        o.waiting("CreateContainerConfigError", 'configmap "billing-config" not found'),
        container=config_spec,
        events=(("Failed", 'Error: configmap "billing-config" not found', "Warning", 22),),
    )
    _rollout(c)
    _job(c)
    _hpa(c)
    c.app("shop", "cart", "cart:1.0.3", o.running(200))
    c.nodes += [o.node(o.NODE), o.node("worker-2", pressure="MemoryPressure")]


def _rollout(c: Cluster) -> None:
    old = o.container("catalog", "catalog:1.4.0", env=[{"name": "LOG_LEVEL", "value": "info"}])
    new = o.container(
        "catalog",
        "catalog:1.5.0",
        env=[
            {"name": "LOG_LEVEL", "value": "debug"},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "catalog-db", "key": "password"}}},
        ],
    )
    c.add("deployments", o.deployment("catalog", "catalog", [new], ready=2, replicas=2, revision=2))
    c.add(
        "replicasets",
        o.replicaset(
            "catalog",
            "catalog",
            suffix="5c8d7f9b4",
            containers=[old],
            revision=1,
            replicas=0,
            minutes_ago=3000,
        ),
    )
    c.add(
        "replicasets",
        o.replicaset(
            "catalog", "catalog", suffix="6f7b9c8d2", containers=[new], revision=2, replicas=2, minutes_ago=45
        ),
    )
    for suffix in ("qk2lp", "zt8wd"):
        name = f"catalog-6f7b9c8d2-{suffix}"
        c.add(
            "pods",
            o.pod(
                "catalog",
                name,
                [new],
                [o.container_status("catalog", "catalog:1.5.0", o.running(44))],
                owner_rs="catalog-6f7b9c8d2",
            ),
        )
    c.add(
        "events",
        o.event(
            "catalog",
            "Deployment",
            "catalog",
            "ScalingReplicaSet",
            "Scaled up replica set catalog-6f7b9c8d2 from 0 to 2",
            type_="Normal",
            first=45,
            last=44,
        ),
    )


def _job(c: Cluster) -> None:
    spec = o.container("report", "report:0.9.0", command=["python", "report.py"])
    job = {
        "metadata": o.metadata("reports", "nightly-report", 30, labels={"job-name": "nightly-report"}),
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 2,
            "template": {
                **o.template("nightly-report", [spec]),
                "spec": {**o.template("nightly-report", [spec])["spec"], "restartPolicy": "Never"},
            },
        },
        "status": {
            "failed": 3,
            "startTime": o.at(30),
            "conditions": [
                {
                    "type": "FailureTarget",
                    "status": "True",
                    "lastProbeTime": o.at(20),
                    "lastTransitionTime": o.at(20),
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                },
                {
                    "type": "Failed",
                    "status": "True",
                    "lastProbeTime": o.at(20),
                    "lastTransitionTime": o.at(20),
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                },
            ],
        },
    }
    c.add_full("jobs", "batch/v1", "Job", job)
    for suffix in ("b7x2k", "m4p9z", "t6q1r"):
        status = o.container_status("report", "report:0.9.0", o.terminated("Error", 1, 21))
        c.add(
            "pods",
            o.pod(
                "reports",
                f"nightly-report-{suffix}",
                [spec],
                [status],
                owner_job="nightly-report",
                phase="Failed",
            ),
        )
    c.add(
        "events",
        o.event(
            "reports",
            "Job",
            "nightly-report",
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
            count=1,
            first=20,
            last=20,
        ),
    )


def _hpa(c: Cluster) -> None:
    c.app("frontend", "frontend", "frontend:7.3.0", o.running(300))
    hpa = {
        "metadata": o.metadata("frontend", "frontend", 300),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "frontend"},
            "minReplicas": 2,
            "maxReplicas": 10,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
        },
        "status": {
            "currentReplicas": 10,
            "desiredReplicas": 10,
            "lastScaleTime": o.at(40),
            "currentMetrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "current": {"averageUtilization": 95, "averageValue": "950m"},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "lastTransitionTime": o.at(40),
                    "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size",
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "lastTransitionTime": o.at(300),
                    "reason": "ValidMetricFound",
                    "message": "the HPA was able to successfully calculate a replica count from cpu"
                    " resource utilization (percentage of request)",
                },
                {
                    "type": "ScalingLimited",
                    "status": "True",
                    "lastTransitionTime": o.at(40),
                    "reason": "TooManyReplicas",
                    "message": "the desired replica count is more than the maximum replica count",
                },
            ],
        },
    }
    c.add_full("horizontalpodautoscalers", "autoscaling/v2", "HorizontalPodAutoscaler", hpa)
    pvc = {
        "metadata": o.metadata("frontend", "frontend-cache", 300),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
            "volumeName": "pvc-1",
        },
        "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}},
    }
    c.add_full("persistentvolumeclaims", "v1", "PersistentVolumeClaim", pvc)


def write_cluster(root: Path) -> Path:
    """Every situation of the table, as a dump tree under `root`."""
    c = Cluster()
    _situations(c)
    return c.write(root)
