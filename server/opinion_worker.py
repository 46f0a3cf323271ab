"""The LLM-opinion worker (docs/design.md §8.10), composed from settings: the agent that asks the
model, the use case that checks and stores its opinion, and an EvaluationWorker over the
`llm_opinion` jobs. An entry point like server.worker (the server and `evigate worker` start it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from evigate.server.usecases.opinion import OpinionJob
from evigate.server.worker import EvaluationWorker, worker_settings
from evigate.storage.opinions import LLM_OPINION
from evigate.storage.repository import Repository

if TYPE_CHECKING:
    from evigate.server.settings import Settings


def opinion_worker(
    settings: Settings,
    repo: Repository,
    on_written: Callable[[str], None] | None = None,
    on_disagreement: Callable[[str], None] | None = None,
    *,
    name: str,
) -> EvaluationWorker | None:
    """The LLM-opinion worker when `evaluation_llm_model` is set (and the repository told to enqueue
    its jobs with each SUCCESS); None otherwise: no opinion, as with the offline backend."""
    if not settings.evaluation.model:
        return None
    from evigate.server.agents.llm.opinion import LLMOpinionAgent

    agent = LLMOpinionAgent.from_settings(
        settings.evaluation.base_url or settings.llm.base_url,
        settings.evaluation.api_key or settings.llm.api_key,
        settings.evaluation.model,
        settings.evaluation.timeout_s,
        settings.llm.json_mode,
        max_retries=settings.llm.max_retries,
    )
    job = OpinionJob(repo, agent, on_disagreement)
    repo.opinion_jobs = True
    # One job at a time, leased for longer than the call may take (two HTTP timeouts, the agent's
    # deadline): a slow model must not let another replica claim the job the call still runs for.
    base = worker_settings(settings)
    budget = 2 * settings.evaluation.timeout_s + 10
    opinion_settings = dataclasses.replace(base, batch_size=1, lease_seconds=max(base.lease_seconds, budget))
    return EvaluationWorker(
        repo,
        opinion_settings,
        on_scored=on_written,
        name=name,
        kind=LLM_OPINION,
        run=job.run,
        close=agent.aclose,  # the agent's pooled HTTP client
    )


def opinion_workers(settings: Settings) -> Callable[[Repository], list[EvaluationWorker]]:
    """For `evigate worker`: the LLM opinion's worker on the worker's repository, when configured."""

    def build(repo: Repository) -> list[EvaluationWorker]:
        worker = opinion_worker(settings, repo, name=f"{settings.grpc.owner}/worker-opinion")
        return [] if worker is None else [worker]

    return build
