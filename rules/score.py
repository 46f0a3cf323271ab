"""The evidence score: seven rules over tool_invocation facts (docs/design.md §5.5).

It measures evidence collection, not answer correctness. `no_tool_call` and `execution_failed`
short-circuit to 0; an L0 hit takes precedence over L1; the sum is clamped to 0–100.
"""

from __future__ import annotations

from collections.abc import Sequence

from evigate.rules.enums import CallStatus, EvidenceStatus, MatchLevel, SessionStatus
from evigate.rules.types import EvidenceScoreResult, ScoreFactor, ScoreFacts

HIT_LEVELS = frozenset({MatchLevel.L0, MatchLevel.L1})


def _is_hit(call: ScoreFacts) -> bool:
    return call.status == CallStatus.SUCCESS and (
        call.match_level in HIT_LEVELS or call.evidence_status == EvidenceStatus.SUPPORTED
    )


def evaluate(session_status: str, invocations: Sequence[ScoreFacts]) -> EvidenceScoreResult:
    """Score a finished session from its status ("SUCCESS" | "FAILED" | ...) and its tool calls."""
    if not invocations:
        return EvidenceScoreResult(0, (ScoreFactor("no_tool_call", 0, "无任何工具调用，直接 0 分"),))
    if session_status.upper() == SessionStatus.FAILED:
        return EvidenceScoreResult(
            0, (ScoreFactor("execution_failed", 0, "会话执行失败(status=FAILED)，直接 0 分"),)
        )
    factors: list[ScoreFactor] = []
    successful = [c for c in invocations if c.status == CallStatus.SUCCESS]
    if successful:
        factors.append(ScoreFactor("has_successful_tool_call", 30, f"有成功的工具调用({len(successful)}次)"))
    if any(c.status == CallStatus.SUCCESS and c.match_level == MatchLevel.L0 for c in invocations):
        factors.append(ScoreFactor("l0_exact_match", 35, "L0 精确匹配命中"))
    elif any(c.status == CallStatus.SUCCESS and c.match_level == MatchLevel.L1 for c in invocations):
        factors.append(ScoreFactor("l1_semantic_match", 20, "无 L0 命中，L1 语义匹配命中"))
    # A failed call retrieved nothing either, but all_tool_calls_failed already penalises it:
    # retrieval_no_hit speaks of retrievals that ran and found nothing.
    if successful and not any(_is_hit(c) for c in successful):
        factors.append(ScoreFactor("retrieval_no_hit", -10, f"有检索调用({len(successful)}次)但无任何命中"))
    if not successful:
        factors.append(ScoreFactor("all_tool_calls_failed", -20, f"全部工具调用失败({len(invocations)}次)"))
    score = max(0, min(100, sum(f.delta for f in factors)))
    return EvidenceScoreResult(score, tuple(factors))
