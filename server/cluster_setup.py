"""The cluster source from the settings (--kube-dump, --kubeconfig with --kube-context, or
--kube-in-cluster), and where it plugs in: the file backend the cluster tools read it from, and the
service catalog, which learns the cluster's workloads. Used by the composition root (server.app)."""

from __future__ import annotations

from evigate.server.config import ConfigError, Settings
from evigate.server.sources.files.backend import FixtureBackend
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.kubernetes.live import LiveSettings
from evigate.server.sources.kubernetes.sightings import cluster_sightings
from evigate.server.sources.kubernetes.source import ApiCluster, DumpCluster
from evigate.server.sources.kubernetes.state import Cluster
from evigate.server.tools import ToolBackend


def build_cluster(settings: Settings) -> Cluster | None:
    """The configured cluster, or None; ConfigError for settings that cannot name one."""
    s = settings
    live = s.kubeconfig is not None or s.kube_in_cluster
    if s.kube_dump is not None and live:
        raise ConfigError("kube_dump: a cluster is read from a dump or from an API server, not both")
    if s.kube_context and s.kubeconfig is None:
        raise ConfigError("kube_context: names a context of --kubeconfig, which is not set")
    if s.kube_dump is not None:
        if not s.kube_dump.is_dir():
            raise ConfigError(f"kube_dump: {s.kube_dump} is not a directory")
        return DumpCluster(s.kube_dump)
    if not live:
        return None
    config = str(s.kubeconfig) if s.kubeconfig is not None else None
    try:
        return ApiCluster(LiveSettings(config, s.kube_context or None, s.kube_namespaces))
    except Exception as error:  # the client's config loaders raise their own kinds
        raise ConfigError(f"kubeconfig: {error}") from None


def plug_cluster(cluster: Cluster | None, tools: ToolBackend) -> Cluster | None:
    """The cluster tools find the cluster on the file backend, whose service catalog learns the
    cluster's workloads (before the catalog's first refresh). Returns the cluster."""
    files = getattr(tools, "files", tools)
    if cluster is not None and isinstance(files, FixtureBackend):
        files.cluster = cluster
        files.services.add_reader(cluster_sightings(cluster))
    return cluster


async def cluster_health(settings: Settings) -> SourceHealth | None:
    """`evigate sources`: the configured cluster's health (None: no cluster configured)."""
    cluster = build_cluster(settings)
    if cluster is None:
        return None
    try:
        return await cluster.health()
    finally:
        await cluster.aclose()
