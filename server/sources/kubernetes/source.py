"""The cluster source as the service holds it: a dump read once, or a live API server read in
snapshots; either answers `state()` and `health()` the same way, and is a log source over its pods'
logs (podlogs.py)."""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evigate.server.queries.types import LogsQuery, Page, PatternsQuery
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.kubernetes import events, query, rollouts
from evigate.server.sources.kubernetes.cluster_config import NAME, ClusterConfig, ClusterConfigError
from evigate.server.sources.kubernetes.dump import read_dump
from evigate.server.sources.kubernetes.live import LIVE_KINDS, LiveCluster, LiveSettings
from evigate.server.sources.kubernetes.names import cluster_names
from evigate.server.sources.kubernetes.podlogs import PodLogs
from evigate.server.sources.kubernetes.sightings import workload_sightings
from evigate.server.sources.kubernetes.state import ClusterState, meta
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.services import Sightings


class _ClusterParts:
    """What a dump and a live cluster do alike: their pods' logs searched as a log source
    (`self.logs`), their health, the workloads the service catalog learns."""

    name = NAME
    watched = True  # its health entry: a dump read once then its state's counts; the API's lists
    logs: PodLogs

    if TYPE_CHECKING:  # given by the class it is mixed into
        where: str

        async def state(self) -> ClusterState: ...

        async def pod_log(
            self, namespace: str, pod: str, container: str | None, previous: bool, timestamps: bool = False
        ) -> str: ...

    async def query_logs(self, query: LogsQuery) -> Page:
        return await self.logs.query_logs(query)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return await self.logs.summarize_logs(query)

    async def aclose(self) -> None:
        await self.logs.aclose()

    async def health(self) -> SourceHealth:
        return await cluster_health(self)

    async def sightings(self) -> Sightings:
        return await workload_sightings(self)


class DumpCluster(_ClusterParts):
    """A `kubectl cluster-info dump` tree (or a directory of `kubectl get -o json` files), read on
    first use and kept: a dump does not change."""

    def __init__(
        self, root: Path, namespaces: tuple[str, ...] = (), embedder: Embedder | None = None
    ) -> None:
        self.root = root
        self.namespaces = namespaces  # empty: every namespace the dump holds
        self.where = str(root)
        self._state: ClusterState | None = None
        self._lock = asyncio.Lock()
        self.logs = PodLogs(self, live=False, embedder=embedder)

    async def state(self) -> ClusterState:
        async with self._lock:
            if self._state is None:
                self._state = await asyncio.to_thread(self._read)
            return self._state

    def _read(self) -> ClusterState:
        state = read_dump(self.root)
        return indexed(only(state, self.namespaces) if self.namespaces else state)

    async def pod_log(
        self, namespace: str, pod: str, container: str | None, previous: bool, timestamps: bool = False
    ) -> str:
        """The pod's logs.txt (kubectl's dump holds the current containers' logs, without times)."""
        path = (await self.state()).pod_logs.get((namespace, pod))
        if path is None:
            raise FileNotFoundError(f"the dump holds no logs of {namespace}/{pod}")
        return await asyncio.to_thread(path.read_text, "utf-8", "replace")


class ApiCluster(LiveCluster, _ClusterParts):
    """A live API server (kubeconfig and context, or the in-cluster service account)."""

    def __init__(self, settings: LiveSettings, embedder: Embedder | None = None) -> None:
        super().__init__(settings)
        self.where = self.host
        self.logs = PodLogs(
            self, live=True, refresh_s=settings.refresh_s, timeout_s=settings.timeout_s, embedder=embedder
        )

    def snapshot(self, kinds: Sequence[str] = LIVE_KINDS) -> ClusterState:
        return indexed(super().snapshot(kinds))

    async def aclose(self) -> None:
        await _ClusterParts.aclose(self)  # the pod logs' folder
        await LiveCluster.aclose(self)  # the API client


def indexed(state: ClusterState) -> ClusterState:
    """The state with what the tools ask of it built now, in the worker thread that read it, not
    by the first question of each kind: each kind's summaries and indexes, the names, the events'
    index, the rollouts' maps. Then one full collection: these long-lived objects (hundreds of
    thousands on a large cluster) would otherwise have the collector's next full pass, a pause of
    100 ms and more, fall on a query."""
    query.index(state)
    events.index(state)
    rollouts.index(state)
    cluster_names(state)
    gc.collect()
    return state


def only(state: ClusterState, namespaces: tuple[str, ...]) -> ClusterState:
    """The state's objects and pod logs in `namespaces` (and the cluster-scoped ones: nodes)."""
    kept = ClusterState(unread=state.unread, unavailable=state.unavailable)
    for kind, items in state.objects.items():
        for item in items:
            namespace = meta(item).get("namespace")
            if not namespace or namespace in namespaces:
                kept.add(kind, item)
    kept.events = [e for e in state.events if not e.namespace or e.namespace in namespaces]
    kept.pod_logs = {key: path for key, path in state.pod_logs.items() if key[0] in namespaces}
    return kept


def cluster_source(config: ClusterConfig, embedder: Embedder | None = None) -> DumpCluster | ApiCluster:
    """The configured cluster (the registry's line, kinds.py); ClusterConfigError for a kubeconfig
    the client cannot load."""
    if config.dump is not None:
        return DumpCluster(config.dump, config.namespaces, embedder)
    kubeconfig = str(config.kubeconfig) if config.kubeconfig is not None else None
    settings = LiveSettings(kubeconfig, config.context, config.namespaces, config.timeout_s, config.refresh_s)
    try:
        return ApiCluster(settings, embedder)
    except Exception as error:  # the client's config loaders raise their own kinds
        raise ClusterConfigError(f"kubeconfig: {error}") from None


async def cluster_health(cluster: ClusterSource) -> SourceHealth:
    """What `evigate sources` and the gRPC health entries show of the cluster."""
    try:
        state = await cluster.state()
    except Exception as exc:
        return SourceHealth(cluster.name, cluster.where, reachable=False, ready=False, detail=str(exc))
    kinds = Counter({kind: len(items) for kind, items in state.objects.items()})
    namespaces = len(state.namespaces())
    parts = [f"{kinds['Pod']} pods, {kinds['Node']} nodes, {namespaces} namespaces, {state.count()} objects"]
    if state.unread:
        parts.append("could not read: " + "; ".join(f"{u.what} ({u.reason})" for u in state.unread[:5]))
    reachable = state.count() > 0 or not state.unavailable
    ready = reachable and "Pod" not in state.unavailable
    return SourceHealth(
        cluster.name, cluster.where, reachable=reachable, ready=ready, detail="; ".join(parts)
    )
