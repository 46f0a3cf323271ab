"""The seam between the pipeline and the agent backends (offline | llm).

Every stage exchanges seed-shaped JSON dicts (docs/design.md §2.2): the same shapes that are stored in the
database and mapped to proto messages by server.codec. A backend implements the four protocols.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evigate.rules.errors import EvigateError
from evigate.rules.sentence_types import Sentence, SentenceMaterial
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolBox, ToolCallResult

JSON = dict[str, Any]


class UnusableOutputError(EvigateError):
    """A stage's reply does not fit its contract (not JSON, an empty answer): the stage ran but
    produced nothing usable, which the pipeline may recover from; a backend failure is not this."""


@dataclass(frozen=True)
class Skill:
    """A diagnosis skill from the catalog (server/skills/*.json)."""

    name: str
    description: str
    keywords: tuple[str, ...]
    alert_names: tuple[str, ...]
    steps: tuple[str, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True)
class StageNote:
    """Something a stage did beyond its plain run, for the trace (StageNote in session.proto)."""

    kind: str  # e.g. "offline_fallback", "json_in_code_fence", "tool_call_in_text", "tool_call_forced"
    detail: str = ""


OFFLINE_FALLBACK = "offline_fallback"
# Who wrote the slot sentences of an answer the LLM Composer rewrote (server.pipeline.compose_slots).
COMPOSER_SLOTS = "composer_slots"
# An LLM stage that code handled because code is strong there (server.agents.llm.routing).
BY_CODE = "by_code"
# The verifier_input key saying who wrote the round's claims: "code" or "model".
CLAIMS_BY = "claims_by"


def claims_by(backend: AgentBackend, executor_notes: Sequence[StageNote]) -> str:
    """ "code" when the offline Executor wrote the round's claims (its backend, a fallback, or a
    hand-over by code), else "model"."""
    if backend.backends()["executor"] != "llm":
        return "code"
    return "code" if any(n.kind in (OFFLINE_FALLBACK, BY_CODE) for n in executor_notes) else "model"


@dataclass(frozen=True)
class StageOutput:
    """A stage's seed-shaped output plus what the trace records about how it was produced."""

    data: JSON
    prompt_version: str | None = None
    notes: tuple[StageNote, ...] = ()


@dataclass(frozen=True)
class ExecutorOutput:
    """The Executor's raw text; the pipeline parses it into executor_evidence_v2."""

    raw_text: str
    prompt_version: str | None = None
    tool_calls: Sequence[ToolCallResult] = field(default_factory=tuple)
    notes: tuple[StageNote, ...] = ()


@dataclass(frozen=True)
class ExecutorTask:
    query: str
    language: str  # "zh" | "en"
    plan: JSON  # planner_plan
    round: int  # from 1
    retry_context: JSON | None  # None on round 1
    tools: ToolBox
    deadline: Deadline


class Planner(Protocol):
    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        """Returns planner_plan: selected_skill (or None), selection_reason, plan, reasoning."""
        ...


class Executor(Protocol):
    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        """Collects evidence with task.tools and returns executor_evidence_v2 JSON text."""
        ...


class Verifier(Protocol):
    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        """verifier_input: original_query, executor_final_answer, executor_structured_output,
        executor_output_parse_status, tool_trace_summary, gatekeeper_result, retry_context.
        Returns the verdict dict: verdict, groundedness_score, critical_fact_count, claim_checks,
        facts_checked, rationale. The pipeline enforces verdict constraints afterwards."""
        ...


class Composer(Protocol):
    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        """composer_input: original_query, language, verdict, allowed_claims, allowed_hypotheses,
        missing_info, recommended_actions, rationale. Returns composer_output: answer_summary,
        recommended_actions, user_facing_answer."""
        ...


@runtime_checkable
class SentenceComposer(Protocol):
    """A Composer that writes its sentences from the sentence check's material (the allowed claims
    with their verified excerpts, the failed calls as could-not-check items): the offline
    Composer, which passes the check by construction, and the LLM Composer, which shows the model
    every id a sentence may be bound to."""

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput: ...

    async def compose_from(
        self, composer_input: JSON, deadline: Deadline, material: SentenceMaterial | None
    ) -> StageOutput: ...


@runtime_checkable
class SlotComposer(Protocol):
    """A Composer that rewrites code's draft slot by slot (the LLM Composer): given the draft's
    sentences that state facts, it returns `{"texts": [...]}`, one text per slot, each to be held
    to its slot's kind and ids (server.pipeline.compose_slots)."""

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput: ...

    async def rewrite(
        self,
        composer_input: JSON,
        slots: Sequence[Sentence],
        material: SentenceMaterial,
        deadline: Deadline,
    ) -> StageOutput: ...


@dataclass(frozen=True)
class AgentBackend:
    """One backend's four stages."""

    name: str  # "offline" | "llm"
    planner: Planner
    executor: Executor
    verifier: Verifier
    composer: Composer
    # The Composer that writes the answer by code from the allowed material: the draft a
    # SlotComposer rewrites, and the answer when this backend's Composer is refused. None:
    # `composer` writes by code itself (the
    # offline backend), so a refusal is not asked again.
    fallback_composer: Composer | None = None
    # Releases what the backend holds (the llm backend's HTTP client); None when there is nothing.
    closer: Callable[[], Awaitable[None]] | None = None
    # Text of the Composer's prompt that an answer must never repeat: its placeholders and
    # instruction sentences (rules.answer_check, answer.prompt_echo). Empty for the offline backend.
    composer_phrases: tuple[str, ...] = ()
    # The backend of each stage when they differ ({"planner": "offline", "composer": "llm"});
    # empty: every stage is `name`'s.
    stage_backends: Mapping[str, str] = field(default_factory=dict)

    def backends(self) -> dict[str, str]:
        """The backend of each of the four stages."""
        stages = ("planner", "executor", "verifier", "composer")
        return {stage: self.stage_backends.get(stage, self.name) for stage in stages}

    async def aclose(self) -> None:
        """Call once at shutdown; the stages must not be used afterwards."""
        if self.closer is not None:
            await self.closer()
