"""The registry of source kinds: how each configured source is built from its settings.

A new kind of source is a folder under server/sources/ (its client and a class that fills the
ports it can, ports.py), one line here, and its settings (config.py). `add_live_sources` builds every
configured source and puts each in the capabilities it fills (a structural check against the
ports), after the files of the base set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from .alertmanager import Alertmanager
from .clickhouse.config import from_sources
from .clickhouse.source import ClickHouseLogs
from .config import SourceConfigError, SourcesConfig
from .kubernetes.config import ClusterConfigError
from .kubernetes.source import cluster_source
from .live import AlertmanagerSource, PrometheusSource, live_alerts
from .ports import ClusterSource, KnowledgeSource, LogSource, MetricSource, Source
from .prometheus import Prometheus
from .signals import SignalCatalog, load_catalog
from .source_set import SourceSet, wall_clock

T = TypeVar("T")
SourceKind = Callable[[SourcesConfig, SignalCatalog], Source]

SOURCE_KINDS: Mapping[str, SourceKind] = {
    "prometheus": lambda c, sig: PrometheusSource(Prometheus(_set(c.prometheus), c.prometheus_limits), sig),
    "alertmanager": lambda c, sig: AlertmanagerSource(
        Alertmanager(_set(c.alertmanager), sig.service_matches)
    ),
    "clickhouse": lambda c, sig: ClickHouseLogs(
        c.clickhouse_logs or from_sources(_set(c.clickhouse).base_url)
    ),
    "kubernetes": lambda c, sig: cluster_source(_set(c.kubernetes)),
}


def _set(settings: T | None) -> T:
    assert settings is not None, "built only when configured"
    return settings


def build_sources(config: SourcesConfig, signals: SignalCatalog | None = None) -> dict[str, Source]:
    """Every configured source by name, in the configuration's order (close each with `aclose`);
    SourceConfigError for settings a client refuses (a kubeconfig it cannot load)."""
    signals = signals or load_catalog()
    try:
        return {s.name: SOURCE_KINDS[s.name](config, signals) for s in config.configured()}
    except ClusterConfigError as error:
        raise SourceConfigError(str(error)) from None


def add_live_sources(
    base: SourceSet,
    config: SourcesConfig,
    signals: SignalCatalog | None = None,
    *,
    reference: datetime | None = None,
) -> SourceSet:
    """`base` unchanged when no source is configured; else `base` with the configured sources
    added (close the set with `aclose`), their alerts in place of the files', "now" the `reference`
    when given, else the wall clock when a source speaks of now (a dump keeps the base's clock)."""
    if not config.configured():
        return base
    signals = signals or load_catalog()
    built = build_sources(config, signals)
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
