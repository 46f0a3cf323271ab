"""The seams of the sources (docs/design.md §6.6): one protocol per kind of evidence.

A `Source` is one thing the service reads (a data directory, a Prometheus, an Alertmanager): it has
a name, a health check (`evigate sources`, and the gRPC health entries when `watched`), the service
names it can vouch for (`sightings`, for the service catalog) and resources to release (`aclose`).
Each capability is a protocol of its own; a source fills the ones it can, and a capability may also
be served by an adapter over several sources (live alerts: Alertmanager's active alerts with
Prometheus's ALERTS history). A SourceSet (source_set.py) holds one or more of each.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from evigate.server.queries.types import (
    KnowledgeHits,
    KnowledgeQuery,
    LogsQuery,
    MetricsQuery,
    Page,
    PatternsQuery,
    PromQLQuery,
    SeriesAnswer,
)

from .http import SourceHealth
from .kubernetes.state import ClusterState
from .services import Sightings
from .signals import SignalCatalog

# What query_promql says when no metric source is configured (the flag that configures one).
NO_METRIC_SOURCE = (
    "no Prometheus configured: start evigate with --prometheus-url URL (or EVIGATE_PROMETHEUS_URL) "
    "to query metrics"
)


class Source(Protocol):
    """One thing the service reads evidence from."""

    @property
    def name(self) -> str: ...

    @property
    def watched(self) -> bool:
        """Checked by the service's health loop (a remote server), not only by `evigate sources`."""
        ...

    async def health(self) -> SourceHealth: ...

    async def sightings(self) -> Sightings:
        """The service names (and alert names, runbook keys) this source holds."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class AlertSource(Protocol):
    """query_metrics: alerts by service, name, state and window; `now` is the set's reference time."""

    async def query_alerts(self, query: MetricsQuery, now: datetime) -> Page: ...


@runtime_checkable
class MetricSource(Protocol):
    """query_promql on a Prometheus-compatible store, and metric discovery (label values)."""

    @property
    def signals(self) -> SignalCatalog:
        """The named signals (cpu, error rate, ...) and how a service is matched in PromQL."""
        ...

    async def query_promql(self, query: PromQLQuery, now: datetime) -> SeriesAnswer: ...

    async def label_values(self, label: str) -> list[str]: ...


@runtime_checkable
class LogSource(Protocol):
    """query_logs and summarize_logs over the events of one log store."""

    async def query_logs(self, query: LogsQuery) -> Page: ...

    async def summarize_logs(self, query: PatternsQuery) -> Page: ...


@runtime_checkable
class KnowledgeSource(Protocol):
    """lookup_knowledge: runbooks, skills and the case library."""

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits: ...


@runtime_checkable
class ClusterSource(Source, Protocol):
    """query_k8s, query_k8s_events, k8s_rollout_history: the cluster's objects and events as one
    state (kubernetes/state.py), and a pod's log (the previous container's after a restart; with
    the API's timestamps when asked). A cluster source is also a LogSource: its pods' logs are
    searched like any log tree (kubernetes/podlogs.py)."""

    @property
    def where(self) -> str:
        """The dump's path or the API server's URL."""
        ...

    async def state(self) -> ClusterState: ...

    async def pod_log(
        self, namespace: str, pod: str, container: str | None, previous: bool, timestamps: bool = False
    ) -> str: ...
