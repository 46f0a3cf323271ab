"""The cluster source from the settings (--kube-dump, --kubeconfig with --kube-context, or
--kube-in-cluster), added to the SourceSet as its cluster capability (the tools read it there, the
service catalog learns its workloads, the health loop checks it). Used by the composition root
(server.app) and `evigate sources`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evigate.server.settings import ConfigError, Settings
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.kubernetes.live import LiveSettings
from evigate.server.sources.kubernetes.source import ApiCluster, DumpCluster
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.source_set import SourceSet


def build_cluster(settings: Settings) -> ClusterSource | None:
    """The configured cluster, or None; ConfigError for settings that cannot name one."""
    s = settings
    live = s.cluster.kubeconfig is not None or s.cluster.in_cluster
    if s.cluster.dump is not None and live:
        raise ConfigError("kube_dump: a cluster is read from a dump or from an API server, not both")
    if s.cluster.context and s.cluster.kubeconfig is None:
        raise ConfigError("kube_context: names a context of --kubeconfig, which is not set")
    if s.cluster.dump is not None:
        if not s.cluster.dump.is_dir():
            raise ConfigError(f"kube_dump: {s.cluster.dump} is not a directory")
        return DumpCluster(s.cluster.dump)
    if not live:
        return None
    config = str(s.cluster.kubeconfig) if s.cluster.kubeconfig is not None else None
    try:
        return ApiCluster(LiveSettings(config, s.cluster.context or None, s.cluster.namespaces))
    except Exception as error:  # the client's config loaders raise their own kinds
        raise ConfigError(f"kubeconfig: {error}") from None


def with_cluster(tools: SourceSet, cluster: ClusterSource | None) -> SourceSet:
    """The set with the cluster as one more source, in the cluster capability (its workloads
    join the service catalog, its health the health loop); `tools` unchanged without one."""
    if cluster is None:
        return tools
    return replace(tools, sources=(*tools.sources, cluster), cluster=(*tools.cluster, cluster))


def first(clusters: Sequence[ClusterSource]) -> ClusterSource | None:
    """The cluster the offline agents read names from (the first configured)."""
    return clusters[0] if clusters else None


def cluster_configured(settings: Settings) -> bool:
    """Whether the settings name a cluster (a dump, a kubeconfig or the in-cluster account)."""
    return (
        settings.cluster.dump is not None
        or settings.cluster.kubeconfig is not None
        or settings.cluster.in_cluster
    )


async def cluster_health(settings: Settings) -> SourceHealth | None:
    """`evigate sources`: the configured cluster's health (None: no cluster configured)."""
    cluster = build_cluster(settings)
    if cluster is None:
        return None
    try:
        return await cluster.health()
    finally:
        await cluster.aclose()
