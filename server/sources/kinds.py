"""The registry of source kinds: how each configured source is built from its settings.

A new kind of source is a folder under server/sources/ (its client and a class that fills the
ports it can, ports.py), one line here, and its settings (sources_config.py). `add_live_sources` builds every
configured source and puts each in the capabilities it fills (a structural check against the
ports), in front of the files of the base set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime

from .alertmanager import Alertmanager
from .clickhouse.clickhouse_config import from_sources
from .clickhouse.source import ClickHouseLogs
from .live import AlertmanagerSource, PrometheusSource, live_alerts
from .ports import KnowledgeSource, LogSource, MetricSource, Source
from .prometheus import Prometheus
from .signals import SignalCatalog, load_signal_catalog
from .source_set import SourceSet, wall_clock
from .sources_config import SourcesConfig, SourceSettings

SourceKind = Callable[[SourceSettings, SourcesConfig, SignalCatalog], Source]

SOURCE_KINDS: Mapping[str, SourceKind] = {
    "prometheus": lambda s, c, signals: PrometheusSource(Prometheus(s, c.prometheus_limits), signals),
    "alertmanager": lambda s, c, signals: AlertmanagerSource(Alertmanager(s, signals.service_matches)),
    "clickhouse": lambda s, c, signals: ClickHouseLogs(c.clickhouse_logs or from_sources(s.base_url)),
}


def build_source(settings: SourceSettings, config: SourcesConfig, signals: SignalCatalog) -> Source:
    return SOURCE_KINDS[settings.name](settings, config, signals)


def build_sources(config: SourcesConfig, signals: SignalCatalog | None = None) -> dict[str, Source]:
    """Every configured source by name, in the configuration's order (close each with `aclose`)."""
    signals = signals or load_signal_catalog()
    return {s.name: build_source(s, config, signals) for s in config.configured()}


def add_live_sources(
    base: SourceSet,
    config: SourcesConfig,
    signals: SignalCatalog | None = None,
    *,
    reference: datetime | None = None,
) -> SourceSet:
    """`base` unchanged when no live source is configured; else `base` with the configured sources
    added (close the set with `aclose`), their alerts in place of the files', "now" the `reference`
    when given, else the wall clock (live data is about now)."""
    if not config.configured():
        return base
    signals = signals or load_signal_catalog()
    built = build_sources(config, signals)
    added = tuple(built.values())
    return replace(
        base,
        sources=(*base.sources, *added),
        alerts=live_alerts(built, signals) or base.alerts,
        metrics=(*base.metrics, *(s for s in added if isinstance(s, MetricSource))),
        logs=(*base.logs, *(s for s in added if isinstance(s, LogSource))),
        knowledge=(*base.knowledge, *(s for s in added if isinstance(s, KnowledgeSource))),
        clock=(lambda: reference) if reference is not None else wall_clock,
    )
