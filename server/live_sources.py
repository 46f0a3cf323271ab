"""The configured sources from the settings (Prometheus, Alertmanager, ClickHouse, the cluster), and
the SourceSet that serves the capabilities they fill (docs/design.md §6.5-6.6). Used by the composition root
(`server/app.py`) and `evigate sources`."""

from __future__ import annotations

from evigate.server.settings import ConfigError, Settings
from evigate.server.sources.kinds import add_live_sources
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.signals import SignalCatalogError, load_signal_catalog
from evigate.server.sources.source_set import SourceSet
from evigate.server.sources.sources_config import (
    SourceConfigError,
    SourcesConfig,
    read_sources_file,
    sources_config,
)


def build_sources(settings: Settings) -> SourcesConfig:
    """The live sources: the URL from the flag / environment (Settings), then the sources file."""
    try:
        document = settings.sources.sources_file or settings.config_file  # its sources table
        sections = read_sources_file(document) if document else {}
        env = {
            key: value
            for key, value in (
                ("EVIGATE_PROMETHEUS_BEARER_TOKEN", settings.sources.prometheus_bearer_token),
                ("EVIGATE_ALERTMANAGER_BEARER_TOKEN", settings.sources.alertmanager_bearer_token),
            )
            if value
        }
        cluster = {
            "dump": settings.cluster.dump,
            "kubeconfig": settings.cluster.kubeconfig,
            "context": settings.cluster.context,
            "in_cluster": settings.cluster.in_cluster,
            "namespaces": settings.cluster.namespaces,
        }
        return sources_config(
            prometheus_url=settings.sources.prometheus_url or None,
            alertmanager_url=settings.sources.alertmanager_url or None,
            clickhouse_url=settings.sources.clickhouse_url or None,
            env=env,
            file_sections=sections,
            cluster_flags=cluster,
        )
    except SourceConfigError as error:
        raise ConfigError(f"sources: {error}") from None


def build_tools(
    settings: Settings, files: SourceSet, sources: SourcesConfig, embedder: Embedder | None = None
) -> SourceSet:
    """The files' sources, with the configured sources added in the capabilities they fill (their
    logs' relevance mode ranking with `embedder` too, as the files' does)."""
    if not sources.configured():
        return files
    try:
        catalog = load_signal_catalog(settings.sources.signals_file)
    except SignalCatalogError as error:
        raise ConfigError(f"signals_file: {error}") from None
    try:
        return add_live_sources(files, sources, catalog, embedder=embedder)
    except SourceConfigError as error:
        raise ConfigError(f"sources: {error}") from None
