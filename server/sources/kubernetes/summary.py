"""One object's status as the tools show it: the fields that say what is wrong, flat, in the order
an on-call engineer reads them. Each summary is a JSON item; `problems` lists what is wrong with it
(empty for a healthy object), in the API's own words (CrashLoopBackOff, OOMKilled, MemoryPressure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from evigate.server.sources.kubernetes.state import JSON, ClusterState, meta
from evigate.server.sources.times import display_time

WAITING_PROBLEMS = (
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "RunContainerError",
)
SIGNALS = {137: "SIGKILL", 143: "SIGTERM", 139: "SIGSEGV", 134: "SIGABRT"}
# Node conditions that are a problem when True (Ready is a problem when not True).
NODE_PRESSURE = ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable")


def when(value: Any) -> str | None:
    """An API timestamp (RFC 3339) as evidence shows moments; None when absent."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return display_time(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return value


def _head(kind: str, item: Mapping[str, Any]) -> JSON:
    m = meta(item)
    head: JSON = {"kind": kind, "namespace": m.get("namespace", ""), "name": m.get("name", "")}
    if not head["namespace"]:
        del head["namespace"]
    return head


def _container(status: Mapping[str, Any], init: bool) -> tuple[JSON, list[str]]:
    out: JSON = {"name": status.get("name", "")}
    if init:
        out["init"] = True
    problems: list[str] = []
    out["ready"] = bool(status.get("ready"))
    out["restarts"] = int(status.get("restartCount") or 0)
    for key, label in (("state", "state"), ("lastState", "last_state")):
        state = status.get(key) or {}
        for phase in ("waiting", "running", "terminated"):
            detail = state.get(phase)
            if not isinstance(detail, dict):
                continue
            part: JSON = {"state": phase}
            if detail.get("reason"):
                part["reason"] = detail["reason"]
            if phase == "terminated":
                code = int(detail.get("exitCode") or 0)
                part["exit_code"] = code
                if detail.get("signal") or code in SIGNALS:
                    part["signal"] = detail.get("signal") or SIGNALS[code]
                if when(detail.get("finishedAt")):
                    part["finished_at"] = when(detail.get("finishedAt"))
            if phase == "running" and when(detail.get("startedAt")):
                part["started_at"] = when(detail.get("startedAt"))
            if detail.get("message"):
                part["message"] = " ".join(str(detail["message"]).split())
            out[label] = part
            reason = str(detail.get("reason") or "")
            if phase == "waiting" and reason in WAITING_PROBLEMS:
                problems.append(reason)
            if phase == "terminated" and (reason == "OOMKilled" or part["exit_code"] != 0):
                problems.append(reason or f"exit code {part['exit_code']}")
    out["image"] = status.get("image", "")
    return out, problems


def pod(state: ClusterState, item: Mapping[str, Any]) -> JSON:
    out = _head("Pod", item)
    status = item.get("status") or {}
    spec = item.get("spec") or {}
    out["phase"] = status.get("phase", "Unknown")
    statuses = status.get("containerStatuses") or []
    out["ready"] = f"{sum(bool(s.get('ready')) for s in statuses)}/{len(spec.get('containers') or statuses)}"
    out["restarts"] = sum(int(s.get("restartCount") or 0) for s in statuses)
    problems: list[str] = []
    if status.get("reason"):
        problems.append(status["reason"])  # Evicted, NodeLost
    containers = []
    for init, group in ((True, status.get("initContainerStatuses") or []), (False, statuses)):
        for s in group:
            c, found = _container(s, init)
            containers.append(c)
            problems += found
    for cond in status.get("conditions") or []:
        if cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
            problems.append("Unschedulable")
            out["scheduling"] = " ".join(str(cond.get("message", "")).split())
    if out["phase"] == "Pending" and not problems:
        problems.append("Pending")
    if out["phase"] == "Pending" and spec.get("nodeSelector"):
        out["node_selector"] = [f"{k}={v}" for k, v in spec["nodeSelector"].items()]
    if out["phase"] == "Failed":
        problems.append("Failed")
    out["problems"] = sorted(set(problems), key=problems.index)
    out["containers"] = containers
    if spec.get("nodeName"):
        out["node"] = spec["nodeName"]
    m = meta(item)
    kind, name = state.workload_of("Pod", m.get("namespace", ""), m.get("name", ""))
    if kind != "Pod":
        out["workload"] = f"{kind}/{name}"
    return out


def _images(item: Mapping[str, Any]) -> list[str]:
    template = ((item.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [str(c.get("image", "")) for c in template.get("containers") or []]


def _conditions(
    item: Mapping[str, Any], healthy: Callable[[Mapping[str, Any]], bool]
) -> tuple[list[str], list[str]]:
    shown, problems = [], []
    for cond in (item.get("status") or {}).get("conditions") or []:
        text = f"{cond.get('type')}={cond.get('status')}"
        if cond.get("reason"):
            text += f" ({cond['reason']}"
            text += f": {' '.join(str(cond['message']).split())})" if cond.get("message") else ")"
        shown.append(text)
        if not healthy(cond):
            problems.append(str(cond.get("reason") or cond.get("type")))
    return shown, problems


def workload(state: ClusterState, kind: str, item: Mapping[str, Any]) -> JSON:
    """Deployments, StatefulSets, DaemonSets: desired / ready / updated / available, conditions."""
    out = _head(kind, item)
    status = item.get("status") or {}
    if kind == "DaemonSet":
        desired = int(status.get("desiredNumberScheduled") or 0)
        ready = int(status.get("numberReady") or 0)
        updated = int(status.get("updatedNumberScheduled") or 0)
        available = int(status.get("numberAvailable") or 0)
    else:
        desired = int((item.get("spec") or {}).get("replicas", 1) or 0)
        ready = int(status.get("readyReplicas") or 0)
        updated = int(status.get("updatedReplicas") or 0)
        available = int(status.get("availableReplicas") or 0)
    out.update(desired=desired, ready=ready, updated=updated, available=available)
    conditions, problems = _conditions(item, lambda c: c.get("status") == "True")
    if ready < desired:
        problems.insert(0, f"{ready}/{desired} ready")
    revision = meta(item).get("annotations", {}).get("deployment.kubernetes.io/revision")
    if revision:
        out["revision"] = int(revision)
    out["images"] = _images(item)
    out["conditions"] = conditions
    out["problems"] = problems
    return out


def node(item: Mapping[str, Any]) -> JSON:
    out = _head("Node", item)

    def healthy(cond: Mapping[str, Any]) -> bool:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
        return not (cond.get("type") in NODE_PRESSURE and cond.get("status") == "True")

    conditions, _ = _conditions(item, healthy)
    out["problems"] = [
        "NotReady" if cond.get("type") == "Ready" else str(cond.get("type"))
        for cond in (item.get("status") or {}).get("conditions") or []
        if not healthy(cond)
    ]
    out["conditions"] = conditions
    if (item.get("spec") or {}).get("unschedulable"):
        out["problems"].append("SchedulingDisabled")
    out["taints"] = [
        f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}"
        for t in (item.get("spec") or {}).get("taints") or []
    ]
    alloc = (item.get("status") or {}).get("allocatable") or {}
    out["allocatable"] = {k: alloc[k] for k in ("cpu", "memory", "pods", "nvidia.com/gpu") if k in alloc}
    return out


def job(item: Mapping[str, Any]) -> JSON:
    out = _head("Job", item)
    status = item.get("status") or {}
    out["succeeded"] = int(status.get("succeeded") or 0)
    out["failed"] = int(status.get("failed") or 0)
    out["active"] = int(status.get("active") or 0)
    conditions, _ = _conditions(item, lambda c: True)
    problems = [
        str(c.get("reason") or c.get("type"))
        for c in status.get("conditions") or []
        if c.get("type") in {"Failed", "FailureTarget"} and c.get("status") == "True"
    ]
    out["conditions"] = conditions
    out["problems"] = sorted(set(problems), key=problems.index)
    return out


def hpa(item: Mapping[str, Any]) -> JSON:
    out = _head("HorizontalPodAutoscaler", item)
    spec, status = item.get("spec") or {}, item.get("status") or {}
    target = spec.get("scaleTargetRef") or {}
    out["target"] = f"{target.get('kind')}/{target.get('name')}"
    out["current"] = int(status.get("currentReplicas") or 0)
    out["desired"] = int(status.get("desiredReplicas") or 0)
    out["min"] = int(spec.get("minReplicas") or 1)
    out["max"] = int(spec.get("maxReplicas") or 0)
    out["metrics"] = [_metric(m) for m in status.get("currentMetrics") or []]
    conditions, problems = _conditions(
        item,
        lambda c: (
            not (c.get("type") == "ScalingLimited" and c.get("status") == "True")
            and c.get("status") != "False"
        ),
    )
    if out["max"] and out["current"] >= out["max"]:
        problems.insert(0, "at max replicas")
    out["conditions"] = conditions
    out["problems"] = problems
    return out


def _metric(metric: Mapping[str, Any]) -> str:
    kind = str(metric.get("type", ""))
    body = metric.get(kind[:1].lower() + kind[1:]) or {}
    name = body.get("name") or (body.get("metric") or {}).get("name") or kind
    current = body.get("current") or {}
    value = current.get("averageUtilization")
    if value is not None:
        return f"{name} {value}%"
    return f"{name} {current.get('averageValue') or current.get('value') or '?'}"


def pvc(item: Mapping[str, Any]) -> JSON:
    out = _head("PersistentVolumeClaim", item)
    spec, status = item.get("spec") or {}, item.get("status") or {}
    out["phase"] = status.get("phase", "Pending")
    out["storage_class"] = spec.get("storageClassName") or ""
    out["requested"] = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "")
    out["problems"] = [] if out["phase"] == "Bound" else [str(out["phase"])]
    return out


def summarize(state: ClusterState, kind: str, item: Mapping[str, Any]) -> JSON:
    """The summary of any kind this source reads (others: the head and no problems), its
    problems right after its name."""
    if kind == "Pod":
        out = pod(state, item)
    elif kind in {"Deployment", "StatefulSet", "DaemonSet"}:
        out = workload(state, kind, item)
    else:
        readers: dict[str, Callable[[Mapping[str, Any]], JSON]] = {
            "Node": node,
            "Job": job,
            "HorizontalPodAutoscaler": hpa,
            "PersistentVolumeClaim": pvc,
        }
        reader = readers.get(kind)
        out = reader(item) if reader is not None else {**_head(kind, item), "problems": []}
    head: JSON = {k: out.pop(k) for k in ("kind", "namespace", "name") if k in out}
    return {**head, "problems": out.pop("problems"), **out}
