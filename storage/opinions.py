"""self_evaluation.llm_opinion: the LLM's opinion beside the rule score, and its delta-0 factors."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.storage.records import JsonDict
from evigate.storage.runner import Runner
from evigate.storage.self_evaluation import locked_self_evaluation, store_self_evaluation

LLM_OPINION = "llm_opinion"  # the job kind, beside evidence_score
LLM_SOURCE = "llm"


def rule_factors(evaluation: JsonDict) -> list[Any]:
    return [
        f
        for f in evaluation.get("factors") or []
        if not (isinstance(f, dict) and f.get("source") == LLM_SOURCE)
    ]


def llm_factors(evaluation: JsonDict) -> list[Any]:
    return [
        f for f in evaluation.get("factors") or [] if isinstance(f, dict) and f.get("source") == LLM_SOURCE
    ]


class OpinionStore:
    _runner: Runner

    async def write_llm_opinion(self, session_id: str, opinion: JsonDict, factors: list[JsonDict]) -> bool:
        """Stores the opinion once: False (and nothing written) when the session already has one.
        The rule factors and the evidence score are left as they are; the opinion's factors go after
        them (the score job keeps them when it writes later)."""

        async def work(conn: AsyncConnection) -> bool:
            current = await locked_self_evaluation(conn, session_id)
            if isinstance(current.get(LLM_OPINION), dict):
                return False
            current[LLM_OPINION] = opinion
            current["factors"] = [*rule_factors(current), *factors]
            await store_self_evaluation(conn, session_id, current)
            return True

        return await self._runner.write(work)
