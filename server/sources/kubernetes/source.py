"""The cluster source as the service holds it: a dump read once, or a live API server read in
snapshots; either answers `state()` and `health()` the same way."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from evigate.server.sources.http import SourceHealth
from evigate.server.sources.kubernetes.dump import read_dump
from evigate.server.sources.kubernetes.live import LiveCluster, LiveSettings
from evigate.server.sources.kubernetes.sightings import workload_sightings
from evigate.server.sources.kubernetes.state import ClusterState
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.services import Sightings

NAME = "kubernetes"


class DumpCluster:
    """A `kubectl cluster-info dump` tree (or a directory of `kubectl get -o json` files), read on
    first use and kept: a dump does not change."""

    name = NAME
    watched = True  # its health entry: read once, then the state's counts

    def __init__(self, root: Path) -> None:
        self.root = root
        self.where = str(root)
        self._state: ClusterState | None = None
        self._lock = asyncio.Lock()

    async def state(self) -> ClusterState:
        async with self._lock:
            if self._state is None:
                self._state = await asyncio.to_thread(read_dump, self.root)
            return self._state

    async def pod_log(self, namespace: str, pod: str, container: str | None, previous: bool) -> str:
        path = (await self.state()).pod_logs.get((namespace, pod))
        if path is None:
            raise FileNotFoundError(f"the dump holds no logs of {namespace}/{pod}")
        return await asyncio.to_thread(path.read_text, "utf-8", "replace")

    async def aclose(self) -> None:
        return None

    async def health(self) -> SourceHealth:
        return await cluster_health(self)

    async def sightings(self) -> Sightings:
        return await workload_sightings(self)


class ApiCluster(LiveCluster):
    """A live API server (kubeconfig and context, or the in-cluster service account)."""

    name = NAME
    watched = True

    def __init__(self, settings: LiveSettings) -> None:
        super().__init__(settings)
        self.where = self.host

    async def health(self) -> SourceHealth:
        return await cluster_health(self)

    async def sightings(self) -> Sightings:
        return await workload_sightings(self)


async def cluster_health(cluster: ClusterSource) -> SourceHealth:
    """What `evigate sources` and the gRPC health entries show of the cluster."""
    try:
        state = await cluster.state()
    except Exception as exc:
        return SourceHealth(cluster.name, cluster.where, reachable=False, ready=False, detail=str(exc))
    kinds = Counter({kind: len(items) for kind, items in state.objects.items()}) + Counter(state.released)
    namespaces = len(state.namespaces())
    parts = [f"{kinds['Pod']} pods, {kinds['Node']} nodes, {namespaces} namespaces, {state.count()} objects"]
    if state.unread:
        parts.append("could not read: " + "; ".join(f"{u.what} ({u.reason})" for u in state.unread[:5]))
    reachable = state.count() > 0 or not state.unavailable
    ready = reachable and "Pod" not in state.unavailable
    return SourceHealth(
        cluster.name, cluster.where, reachable=reachable, ready=ready, detail="; ".join(parts)
    )
