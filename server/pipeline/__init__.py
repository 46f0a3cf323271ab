"""The evidence-gated pipeline: Planner → Executor → Gatekeeper → Verifier → Composer."""

from server.pipeline.events import ChatResult, StageEvent
from server.pipeline.orchestrator import Pipeline, SessionRunning

__all__ = ["ChatResult", "Pipeline", "SessionRunning", "StageEvent"]
