"""The registry of source kinds: how each configured source is built from its settings.

A new kind of source is a folder under server/sources/ (its client and a class that fills the
ports it can, ports.py), one line here, and its settings (sources_config.py). `add_live_sources` builds every
configured source and puts each in the capabilities it fills (a structural check against the
ports), after the files of the base set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

from .alertmanager import Alertmanager
from .clickhouse.clickhouse_config import from_sources
from .clickhouse.source import ClickHouseLogs
from .kubernetes.cluster_config import ClusterConfigError
from .kubernetes.source import cluster_source
from .live import AlertmanagerSource, PrometheusSource, live_alerts
from .ports import ClusterSource, KnowledgeSource, LogSource, MetricSource, Source
from .prometheus import Prometheus
from .retrieval.embedder import Embedder
from .signals import SignalCatalog, load_signal_catalog
from .source_set import SourceSet, wall_clock
from .sources_config import SourceConfigError, SourcesConfig

T = TypeVar("T")


@dataclass(frozen=True)
class Shared:
    """What the sources of one configuration share: the signal catalog, and the embedder a log
    source's relevance mode fuses with BM25 as the files' does (None: BM25 alone)."""

    signals: SignalCatalog
    embedder: Embedder | None = None


SourceKind = Callable[[SourcesConfig, Shared], Source]

SOURCE_KINDS: Mapping[str, SourceKind] = {
    "prometheus": lambda c, sh: PrometheusSource(
        Prometheus(_set(c.prometheus), c.prometheus_limits), sh.signals
    ),
    "alertmanager": lambda c, sh: AlertmanagerSource(
        Alertmanager(_set(c.alertmanager), sh.signals.service_matches)
    ),
    "clickhouse": lambda c, sh: ClickHouseLogs(
        c.clickhouse_logs or from_sources(_set(c.clickhouse).base_url), embedder=sh.embedder
    ),
    "kubernetes": lambda c, sh: cluster_source(_set(c.kubernetes), sh.embedder),
}


def _set(settings: T | None) -> T:
    assert settings is not None, "built only when configured"
    return settings


def build_sources(
    config: SourcesConfig, signals: SignalCatalog | None = None, embedder: Embedder | None = None
) -> dict[str, Source]:
    """Every configured source by name, in the configuration's order (close each with `aclose`);
    SourceConfigError for settings a client refuses (a kubeconfig it cannot load)."""
    shared = Shared(signals or load_signal_catalog(), embedder)
    try:
        return {s.name: SOURCE_KINDS[s.name](config, shared) for s in config.configured()}
    except ClusterConfigError as error:
        raise SourceConfigError(str(error)) from None


def add_live_sources(
    base: SourceSet,
    config: SourcesConfig,
    signals: SignalCatalog | None = None,
    *,
    reference: datetime | None = None,
    embedder: Embedder | None = None,
) -> SourceSet:
    """`base` unchanged when no source is configured; else `base` with the configured sources
    added (close the set with `aclose`), their alerts in place of the files', "now" the `reference`
    when given, else the wall clock when a source speaks of now (a dump keeps the base's clock)."""
    if not config.configured():
        return base
    signals = signals or load_signal_catalog()
    built = build_sources(config, signals, embedder)
    added = tuple(built.values())
    return replace(
        base,
        sources=(*base.sources, *added),
        alerts=live_alerts(built, signals) or base.alerts,
        metrics=(*base.metrics, *(s for s in added if isinstance(s, MetricSource))),
        logs=(*base.logs, *(s for s in added if isinstance(s, LogSource))),
        knowledge=(*base.knowledge, *(s for s in added if isinstance(s, KnowledgeSource))),
        cluster=(*base.cluster, *(s for s in added if isinstance(s, ClusterSource))),
        clock=(lambda: reference) if reference is not None else wall_clock if config.live() else base.clock,
    )
