"""The offline agent backend: deterministic, rule-based, no network (docs/design.md §2.2)."""

from __future__ import annotations

from collections.abc import Sequence

from evigate.server.agents.base import AgentBackend
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.agents.offline.executor import OfflineExecutor
from evigate.server.agents.offline.planner import OfflinePlanner
from evigate.server.agents.offline.verifier import OfflineVerifier
from evigate.server.agents.offline.vocabulary import KNOWN_SERVICES
from evigate.server.sources.signals import SignalCatalog

__all__ = [
    "OfflineComposer",
    "OfflineExecutor",
    "OfflinePlanner",
    "OfflineVerifier",
    "build_offline_backend",
]


def build_offline_backend(
    *, known_services: Sequence[str] = KNOWN_SERVICES, signals: SignalCatalog | None = None
) -> AgentBackend:
    """The four offline stages. `known_services`: service names recognised even without a
    `-service` / `-gateway` suffix (default: the demo world's). `signals`: the signal catalog when a
    Prometheus is configured, so a metric-value question is answered from it (signal_calls.py)."""
    return AgentBackend(
        name="offline",
        planner=OfflinePlanner(known_services=known_services, signals=signals),
        executor=OfflineExecutor(known_services=known_services, signals=signals),
        verifier=OfflineVerifier(known_services=known_services),
        composer=OfflineComposer(),
    )
