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
        LLMSettings(
            base_url=settings.llm.base_url,
            api_key=settings.llm.api_key,
            model=settings.llm.model,
            planner_model=settings.llm.planner_model or None,
            executor_model=settings.llm.executor_model or None,
            verifier_model=settings.llm.verifier_model or None,
            composer_model=settings.llm.composer_model or None,
            timeout=settings.llm.timeout_s,
            max_retries=settings.llm.max_retries,
            json_mode=settings.llm.json_mode,
            planner_fallback=settings.llm.planner_fallback,
            executor_fallback=settings.llm.executor_fallback,
            verifier_fallback=settings.llm.verifier_fallback,
            composer_fallback=settings.llm.composer_fallback,
            executor_retry=settings.llm.executor_retry,
            planner_anchor=settings.llm.planner_anchor,
        ),
        offline=offline,
    )
