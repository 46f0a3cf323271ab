"""A cluster with one situation per namespace, written as `kubectl cluster-info dump
--all-namespaces --output-directory` writes it (typed Lists, items without kind) plus the
`kubectl get -o json` files it does not cover (jobs, HPA, PVC: a `List` of full objects).

| namespace | what is wrong |
|---|---|
| payments | payments crash-looping: exit code 1, 12 restarts |
| orders | orders OOMKilled, exit code 137 |
| checkout | checkout's image cannot be pulled (ImagePullBackOff) |
| search | search Pending: Insufficient memory, the control plane's taint |
| inventory | inventory's readiness probe failing with HTTP 503 |
| billing | billing's ConfigMap billing-config missing (CreateContainerConfigError) |
| catalog | catalog rolled out 45 minutes ago: image 1.4.0 → 1.5.0, LOG_LEVEL info → debug |
| reports | Job nightly-report failed: BackoffLimitExceeded |
| frontend | HPA frontend at its maximum, 10 of 10 |
| shop | cart: healthy, nothing wrong |
| (nodes) | worker-2 under MemoryPressure |
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.sources.kubernetes import objects as o

JSON = dict[str, Any]
DUMP_FILES = {
    "events": ("EventList", "v1"),
    "replication-controllers": ("ReplicationControllerList", "v1"),
    "services": ("ServiceList", "v1"),
    "daemonsets": ("DaemonSetList", "apps/v1"),
    "deployments": ("DeploymentList", "apps/v1"),
    "replicasets": ("ReplicaSetList", "apps/v1"),
    "pods": ("PodList", "v1"),
}


class Cluster:
    def __init__(self) -> None:
        self.by_namespace: dict[str, dict[str, list[JSON]]] = defaultdict(lambda: defaultdict(list))
        self.extra: dict[str, dict[str, list[JSON]]] = defaultdict(lambda: defaultdict(list))
        self.nodes: list[JSON] = []
        self.logs: dict[tuple[str, str], str] = {}

    def add(self, plural: str, item: JSON) -> None:
        self.by_namespace[item["metadata"]["namespace"]][plural].append(item)

    def add_full(self, plural: str, api: str, kind: str, item: JSON) -> None:
        self.extra[item["metadata"]["namespace"]][plural].append({"apiVersion": api, "kind": kind, **item})

    def app(
        self,
        namespace: str,
        name: str,
        image: str,
        state: JSON,
        *,
        last: JSON | None = None,
        restarts: int = 0,
        events: tuple[tuple[str, str, str, int], ...] = (),
        ready: bool | None = None,
        phase: str = "Running",
        conditions: list[JSON] | None = None,
        node: str | None = o.NODE,
        container: JSON | None = None,
        log: str = "",
    ) -> str:
        """A deployment of one replica whose pod is in `state`; returns the pod's name."""
        spec = container or o.container(name, image)
        status = o.container_status(name, image, state, last, restarts) if phase != "Pending" else None
        if status is not None and ready is not None:
            status["ready"] = ready
            status["started"] = True
        is_ready = bool(status and status["ready"])
        self.add("deployments", o.deployment(namespace, name, [spec], ready=int(is_ready)))
        self.add(
            "replicasets",
            o.replicaset(
                namespace,
                name,
                suffix="7d9f8b6c5d",
                containers=[spec],
                revision=1,
                replicas=1,
                minutes_ago=240,
            ),
        )
        pod_name = f"{name}-7d9f8b6c5d-x2x4q"
        self.add(
            "pods",
            o.pod(
                namespace,
                pod_name,
                [spec],
                [status] if status else [],
                owner_rs=f"{name}-7d9f8b6c5d",
                phase=phase,
                conditions=conditions,
                node=node,
                labels={"app": name, "pod-template-hash": "7d9f8b6c5d"},
            ),
        )
        for reason, message, type_, count in events:
            self.add("events", o.event(namespace, "Pod", pod_name, reason, message, type_=type_, count=count))
        self.logs[(namespace, pod_name)] = log
        return pod_name

    def write(self, root: Path) -> Path:
        """The dump tree under `root`."""
        root.mkdir(parents=True, exist_ok=True)
        _write(
            root / "nodes.json",
            {
                "kind": "NodeList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "9000"},
                "items": self.nodes,
            },
        )
        for namespace, lists in sorted(self.by_namespace.items()):
            folder = root / namespace
            folder.mkdir(exist_ok=True)
            for plural, (kind, api) in DUMP_FILES.items():
                typed = {
                    "kind": kind,
                    "apiVersion": api,
                    "metadata": {"resourceVersion": "9000"},
                    "items": lists.get(plural, []),
                }
                _write(folder / f"{plural}.json", typed)
            for pod in lists.get("pods", []):
                name = pod["metadata"]["name"]
                (folder / name).mkdir(exist_ok=True)
                lines = [
                    f"==== START logs for container {c['name']} of pod {namespace}/{name} ===="
                    for c in pod["spec"]["containers"]
                ]
                body = self.logs.get((namespace, name), "")
                text = (
                    "\n".join([lines[0], *([body] if body else []), lines[0].replace("START", "END")]) + "\n"
                )
                (folder / name / "logs.txt").write_text(text, encoding="utf-8")
        for namespace, lists in self.extra.items():
            for plural, items in lists.items():
                full = {
                    "apiVersion": "v1",
                    "items": [_sorted(i) for i in items],
                    "kind": "List",
                    "metadata": {"resourceVersion": ""},
                }
                (root / namespace).mkdir(exist_ok=True)
                (root / namespace / f"{plural}.json").write_text(
                    json.dumps(full, indent=4, sort_keys=True) + "\n", encoding="utf-8"
                )
        return root


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _write(path: Path, document: JSON) -> None:
    path.write_text(json.dumps(document, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
