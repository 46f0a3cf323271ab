"""Per-stage agent backends, and the offline fallback of LLM stages (docs/design.md §2.2).

Each stage runs on its own backend (`offline` or `llm`), so offline Planner and Executor can be
combined with an LLM Verifier and Composer. An LLM stage with `fallback = offline` (the default)
runs its offline agent when its endpoint is down or its output stays unusable after its retries;
the output carries an `offline_fallback` note saying why, which the trace records and the answer
states. With `fallback = fail` the error ends the session as before.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

from evigate.rules.sentence_types import Sentence, SentenceMaterial
from evigate.server.agents.base import (
    JSON,
    OFFLINE_FALLBACK,
    AgentBackend,
    Composer,
    Executor,
    ExecutorOutput,
    ExecutorTask,
    Planner,
    SentenceComposer,
    Skill,
    SlotComposer,
    StageNote,
    StageOutput,
    UnusableOutputError,
    Verifier,
)
from evigate.server.agents.llm import LLMClient, LLMError, LLMSettings, LLMUnavailableError, build_llm_backend
from evigate.server.agents.llm.llm_settings import FALLBACK_STAGES
from evigate.server.agents.llm.replies import failure_kind
from evigate.server.agents.offline import build_offline_backend
from evigate.server.deadline import Deadline
from evigate.server.jsontext import find_json_object

log = logging.getLogger("evigate.agents")
BACKENDS = ("offline", "llm")
# what makes a stage run offline: the endpoint failed for good, or the reply stayed unusable
_RECOVERABLE = (LLMError, UnusableOutputError)


def _note(stage: str, error: BaseException) -> StageNote:
    kind = failure_kind(error)
    log.warning("llm.stage_fallback stage=%s reason=%s error=%s", stage, kind, error)
    return StageNote(OFFLINE_FALLBACK, f"{kind}: {type(error).__name__}: {str(error)[:300]}")


def _with(output: StageOutput, note: StageNote) -> StageOutput:
    return dataclasses.replace(output, notes=(*output.notes, note))


class FallbackPlanner:
    def __init__(self, llm: Planner, offline: Planner) -> None:
        self._llm, self._offline = llm, offline

    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        try:
            return await self._llm.plan(query, language, skills, deadline)
        except _RECOVERABLE as error:
            note = _note("planner", error)
            return _with(await self._offline.plan(query, language, skills, deadline), note)


class FallbackExecutor:
    """Falls back when the endpoint fails and also when the model's last reply (after the LLM
    Executor's own repeat) still holds no JSON object: the offline Executor then writes claims
    over the tool results the session already has, where the unparseable text could only end the
    round REJECT. Output that parses goes on to the Gatekeeper, which judges it as it is. With
    `retry_offline`, the retry round after a REJECT of the model's claims is the offline
    Executor's too (the one retry round is better spent on claims code writes than on a second
    guess of a model that just got them wrong)."""

    def __init__(self, llm: Executor, offline: Executor, *, retry_offline: bool = False) -> None:
        self._llm, self._offline = llm, offline
        self._retry_offline = retry_offline

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        if self._retry_offline and task.retry_context is not None:
            return await self._offline_run(task, UnusableOutputError(_rejected(task.retry_context)))
        try:
            output = await self._llm.execute(task)
        except _RECOVERABLE as error:
            return await self._offline_run(task, error)
        if find_json_object(output.raw_text) is None:
            unusable = UnusableOutputError(f"the reply holds no JSON object: {output.raw_text[:120]!r}")
            return await self._offline_run(task, unusable)
        return output

    async def _offline_run(self, task: ExecutorTask, error: BaseException) -> ExecutorOutput:
        note = _note("executor", error)
        # the same ToolBox: calls the model already made are deduped, not run again
        out = await self._offline.execute(task)
        return dataclasses.replace(out, notes=(*out.notes, note))


def _rejected(retry_context: JSON) -> str:
    """Why the retry round runs offline, from the retry context of the round before."""
    rules = retry_context.get("failed_rules") or []
    shown = ", ".join(str(r) for r in rules[:3]) if isinstance(rules, list) else ""
    return "the model's claims were rejected in the round before" + (f" ({shown})" if shown else "")


class FallbackVerifier:
    def __init__(self, llm: Verifier, offline: Verifier) -> None:
        self._llm, self._offline = llm, offline

    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        try:
            return await self._llm.verify(verifier_input, deadline)
        except _RECOVERABLE as error:
            note = _note("verifier", error)
            return _with(await self._offline.verify(verifier_input, deadline), note)


class FallbackComposer:
    """Only an endpoint failure falls back here: an unusable reply is the Composer stage's to
    replace with code's draft (server.pipeline.compose_slots)."""

    def __init__(self, llm: Composer, offline: Composer) -> None:
        self._llm, self._offline = llm, offline

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        return await self.compose_from(composer_input, deadline, None)

    async def compose_from(
        self, composer_input: JSON, deadline: Deadline, material: SentenceMaterial | None
    ) -> StageOutput:
        try:
            return await _written(self._llm, composer_input, deadline, material)
        except LLMUnavailableError as error:
            note = _note("composer", error)
            return _with(await _written(self._offline, composer_input, deadline, material), note)

    async def rewrite(
        self,
        composer_input: JSON,
        slots: Sequence[Sentence],
        material: SentenceMaterial,
        deadline: Deadline,
    ) -> StageOutput:
        """The model's slot texts; with the endpoint down, none (code's draft stands), noted."""
        if not isinstance(self._llm, SlotComposer):
            raise UnusableOutputError("composer: the model's Composer writes no slots")
        try:
            return await self._llm.rewrite(composer_input, slots, material, deadline)
        except LLMUnavailableError as error:
            return StageOutput({"texts": []}, None, (_note("composer", error),))


async def _written(
    composer: Composer, composer_input: JSON, deadline: Deadline, material: SentenceMaterial | None
) -> StageOutput:
    """`composer`'s answer, given the sentence material when it writes from it."""
    if isinstance(composer, SentenceComposer):
        return await composer.compose_from(composer_input, deadline, material)
    return await composer.compose(composer_input, deadline)


def build_agents(
    backends: Mapping[str, str],
    llm_settings: LLMSettings | None = None,
    *,
    client: LLMClient | None = None,
    offline: AgentBackend | None = None,
) -> AgentBackend:
    """The four stages, each on the backend `backends[stage]` names (missing: offline). The LLM
    stages share one client (one per endpoint: it remembers which response formats it accepts)."""
    chosen = {stage: backends.get(stage, "offline") for stage in FALLBACK_STAGES}
    for stage, backend in chosen.items():
        if backend not in BACKENDS:
            raise ValueError(f"{stage} backend: expected offline or llm, got {backend!r}")
    # The offline stages (and the LLM stages' fallbacks): the caller's, built over its service
    # and signal catalogs, else ones that take service-shaped names as written.
    offline = offline or build_offline_backend()
    if all(backend == "offline" for backend in chosen.values()):
        return offline
    if llm_settings is None:
        raise ValueError("an llm stage needs LLM settings")
    # code first (server.agents.llm.routing): the model is asked where the offline stages are weak
    code_first = llm_settings.planner_anchor == "offline"
    llm = build_llm_backend(
        llm_settings,
        client=client,
        anchor=offline.planner if code_first else None,
        code_executor=offline.executor if code_first else None,
        code_verifier=offline.verifier if code_first else None,
    )

    def wrapped(stage: str) -> bool:
        return llm_settings.fallback_for(stage) == "offline"

    planner: Planner = llm.planner
    executor: Executor = llm.executor
    verifier: Verifier = llm.verifier
    composer: Composer = llm.composer
    if wrapped("planner"):
        planner = FallbackPlanner(llm.planner, offline.planner)
    if wrapped("executor"):
        executor = FallbackExecutor(
            llm.executor, offline.executor, retry_offline=llm_settings.executor_retry == "offline"
        )
    if wrapped("verifier"):
        verifier = FallbackVerifier(llm.verifier, offline.verifier)
    if wrapped("composer"):
        composer = FallbackComposer(llm.composer, offline.composer)
    every_llm = all(backend == "llm" for backend in chosen.values())
    return AgentBackend(
        name="llm" if every_llm else "mixed",
        planner=planner if chosen["planner"] == "llm" else offline.planner,
        executor=executor if chosen["executor"] == "llm" else offline.executor,
        verifier=verifier if chosen["verifier"] == "llm" else offline.verifier,
        composer=composer if chosen["composer"] == "llm" else offline.composer,
        fallback_composer=offline.composer if chosen["composer"] == "llm" else None,
        closer=llm.closer,
        composer_phrases=llm.composer_phrases if chosen["composer"] == "llm" else (),
        stage_backends=chosen,
    )
