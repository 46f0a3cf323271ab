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

    backends = settings.stage_backends()
    if "llm" not in backends.values():
        return build_stage_agents(backends, offline=offline)
    from evigate.server.agents.llm import LLMSettings

    return build_stage_agents(
        backends,
        LLMSettings(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key,
            model=settings.llm_model,
            planner_model=settings.llm_planner_model or None,
            executor_model=settings.llm_executor_model or None,
            verifier_model=settings.llm_verifier_model or None,
            composer_model=settings.llm_composer_model or None,
            timeout=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
            json_mode=settings.llm_json_mode,
            planner_fallback=settings.llm_planner_fallback,
            executor_fallback=settings.llm_executor_fallback,
            verifier_fallback=settings.llm_verifier_fallback,
            composer_fallback=settings.llm_composer_fallback,
            executor_retry=settings.llm_executor_retry,
            planner_anchor=settings.llm_planner_anchor,
        ),
        offline=offline,
    )
