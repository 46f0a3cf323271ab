"""The stage agents from the settings: each stage on its backend (offline or llm), the LLM stages
with their offline fallbacks. Used by the composition root (server.app)."""

from __future__ import annotations

from evigate.server.agents.base import AgentBackend
from evigate.server.settings import Settings
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.services import ServiceCatalog
from evigate.server.sources.signals import SignalCatalog


def build_agents(
    settings: Settings,
    services: ServiceCatalog | None = None,
    signals: SignalCatalog | None = None,
    cluster: ClusterSource | None = None,
) -> AgentBackend:
    """Each stage on its backend (server.agents.mix); LLM stages fall back to offline per setting.
    The offline stages read the service catalog and, with a Prometheus, the signal catalog."""
    from evigate.server.agents.mix import build_agents as build_stage_agents
    from evigate.server.agents.offline import build_offline_backend

    offline = build_offline_backend(catalog=services, signals=signals, cluster=cluster)

    backends = settings.agents.stage_backends()
    if "llm" not in backends.values():
        return build_stage_agents(backends, offline=offline)
    from evigate.server.agents.llm import LLMSettings

    return build_stage_agents(
        backends,
        LLMSettings.from_settings(settings.llm),
        offline=offline,
    )
