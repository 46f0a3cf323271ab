"""The evidence-gated pipeline: Planner → Executor → Gatekeeper → Verifier → Composer."""

from evigate.server.pipeline.events import ChatResult, StageEvent
from evigate.server.pipeline.orchestrator import Pipeline, SessionRunning

__all__ = ["ChatResult", "Pipeline", "SessionRunning", "StageEvent"]
