"""The names a question can use for what is in the cluster: pods (each with its namespace and
workload), workloads (kind and namespace) and namespaces. Read once per state."""

from __future__ import annotations

from dataclasses import dataclass, field

from evigate.server.sources.kubernetes.state import ClusterState, meta


@dataclass(frozen=True)
class Place:
    kind: str  # Pod, Deployment, StatefulSet, …, Namespace
    name: str
    namespace: str
    workload: str = ""  # a pod's workload name (empty: none)


@dataclass
class ClusterNames:
    places: dict[str, list[Place]] = field(default_factory=dict)  # lowercased name → where it is
    namespaces: set[str] = field(default_factory=set)

    def add(self, place: Place) -> None:
        self.places.setdefault(place.name.lower(), []).append(place)


def cluster_names(state: ClusterState) -> ClusterNames:
    if "cluster_names" not in state.memo:
        names = ClusterNames(namespaces=set(state.namespaces()))
        for kind, namespace, name in state.workloads():
            names.add(Place(kind, name, namespace))
        for pod in state.of("Pod"):
            m = meta(pod)
            namespace = m.get("namespace", "")
            kind, workload = state.workload_of("Pod", namespace, m.get("name", ""))
            names.add(Place("Pod", m.get("name", ""), namespace, workload if kind != "Pod" else ""))
        for kind in ("Node", "Job", "HorizontalPodAutoscaler", "PersistentVolumeClaim"):
            for item in state.of(kind):
                m = meta(item)
                if m.get("name", "").lower() not in names.places:
                    names.add(Place(kind, m.get("name", ""), m.get("namespace", "")))
        state.memo["cluster_names"] = names
    found: ClusterNames = state.memo["cluster_names"]
    return found
