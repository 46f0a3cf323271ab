"""The offline agent backend: deterministic, rule-based, no network (docs/design.md §2.2)."""

from __future__ import annotations

from evigate.server.agents.base import AgentBackend
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.agents.offline.executor import OfflineExecutor
from evigate.server.agents.offline.planner import OfflinePlanner
from evigate.server.agents.offline.verifier import OfflineVerifier
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.services import ServiceCatalog
from evigate.server.sources.signals import SignalCatalog

__all__ = [
    "OfflineComposer",
    "OfflineExecutor",
    "OfflinePlanner",
    "OfflineVerifier",
    "build_offline_backend",
]


def build_offline_backend(
    *,
    catalog: ServiceCatalog | None = None,
    signals: SignalCatalog | None = None,
    cluster: ClusterSource | None = None,
) -> AgentBackend:
    """The four offline stages. `catalog`: the service catalog of the tool backend (the services,
    aliases and alert names of the sources); None: service-shaped names are taken as written.
    `signals`: the signal catalog when a Prometheus is configured, so a metric-value question is
    answered from it (signal_calls.py). `cluster`: the cluster source, whose pods, workloads and
    namespaces a question may name (cluster_calls.py)."""
    return AgentBackend(
        name="offline",
        planner=OfflinePlanner(catalog=catalog, signals=signals, cluster=cluster),
        executor=OfflineExecutor(catalog=catalog, signals=signals, cluster=cluster),
        verifier=OfflineVerifier(catalog=catalog),
        composer=OfflineComposer(),
    )
