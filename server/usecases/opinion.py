"""The opinion job (docs/design.md §8): an LLM's structured opinion of a finished answer, stored in
self_evaluation.llm_opinion beside the rule score and checked against what code found.

Run by the worker for each `llm_opinion` job (enqueued with the SUCCESS when an evaluation model is
configured). An error propagates, so the worker retries the job with backoff and, after the last
attempt, marks it failed with the error: the field then stays empty and the job record says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any, Protocol

from evigate.rules import opinion as rules
from evigate.rules.enums import SessionStatus
from evigate.storage.records import TraceRecord

log = logging.getLogger("evigate.opinion")
JSON = dict[str, Any]


class OpinionReplyLike(Protocol):
    @property
    def data(self) -> JSON: ...
    @property
    def model(self) -> str: ...
    @property
    def prompt_version(self) -> str: ...


class OpinionAsker(Protocol):
    async def ask(self, question: str, answer: str, verified_claims: list[JSON]) -> OpinionReplyLike: ...


class OpinionStore(Protocol):
    async def get_trace(self, session_id: str) -> TraceRecord | None: ...

    async def write_llm_opinion(self, session_id: str, opinion: JSON, factors: list[JSON]) -> bool: ...


def verified_claims(evaluation: Mapping[str, Any]) -> list[JSON]:
    """The claims the Verifier found supported, with their excerpts: what the model may judge by."""
    supported = {
        c.get("claim_id")
        for c in evaluation.get("claim_checks") or []
        if isinstance(c, Mapping) and c.get("supported") is True
    }
    output = evaluation.get("executor_structured_output") or {}
    claims = output.get("claims") or [] if isinstance(output, Mapping) else []
    return [
        {
            "claim_text": claim.get("claim_text", ""),
            "evidence_excerpts": [
                b.get("evidence_excerpt", "")
                for b in claim.get("evidence_bindings") or []
                if isinstance(b, Mapping)
            ],
        }
        for claim in claims
        if isinstance(claim, Mapping) and claim.get("claim_id") in supported
    ]


class OpinionJob:
    def __init__(
        self, store: OpinionStore, asker: OpinionAsker, on_disagreement: Callable[[str], None] | None = None
    ) -> None:
        self._store = store
        self._asker = asker
        self._on_disagreement = on_disagreement  # the metrics counter, per disagreeing item

    async def run(self, session_id: str) -> JSON | None:
        """The stored opinion; None when there is none to give (session gone or not a SUCCESS).
        A session that already has one keeps it: one opinion per session."""
        trace = await self._store.get_trace(session_id)
        if trace is None or trace.session.status != SessionStatus.SUCCESS or not trace.session.answer:
            return None
        evaluation_root = trace.session.self_evaluation or {}
        existing = evaluation_root.get("llm_opinion")
        if isinstance(existing, dict):
            log.info("llm opinion already written", extra={"session_id": session_id})
            return existing
        evaluation = evaluation_root.get("verifier_evaluation")
        evaluation = evaluation if isinstance(evaluation, Mapping) else {}
        reply = await self._asker.ask(trace.session.query, trace.session.answer, verified_claims(evaluation))
        items = rules.parse_items(reply.data)  # OpinionFormatError: retried, then the job fails
        answer_check = (trace.session.extras or {}).get("answer_check")
        marks = rules.code_marks(
            evaluation,
            [asdict(r) for r in trace.rounds],
            answer_check if isinstance(answer_check, Mapping) else None,
        )
        disagreed = rules.disagreements(items, marks)
        seed = rules.opinion_seed(items, disagreed, reply.model, reply.prompt_version)
        written = await self._store.write_llm_opinion(session_id, seed, rules.factors(items, disagreed))
        if written and self._on_disagreement is not None:
            for disagreement in disagreed:
                self._on_disagreement(disagreement.item)
        log.info(
            "llm opinion written",
            extra={"session_id": session_id, "disagreements": len(disagreed), "model": reply.model},
        )
        return seed
