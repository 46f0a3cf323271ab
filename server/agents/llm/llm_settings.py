"""Configuration of the llm agent backend (any OpenAI-compatible chat-completions endpoint)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from evigate.server.settings import Anchor, Fallback, JsonMode, Retry
from evigate.server.settings.pipeline import LlmSettings

Stage = Literal["planner", "executor", "verifier", "composer", "evaluator"]

JSON_MODES: tuple[str, ...] = get_args(JsonMode)
STAGES: tuple[str, ...] = get_args(Stage)
FALLBACKS: tuple[str, ...] = get_args(Fallback)
RETRIES: tuple[str, ...] = get_args(Retry)
ANCHORS: tuple[str, ...] = get_args(Anchor)
# The pipeline's stages, which fall back to offline; the evaluator (the opinion job) fails its job.
FALLBACK_STAGES: tuple[str, ...] = ("planner", "executor", "verifier", "composer")


@dataclass(frozen=True, repr=False)
class LLMSettings:
    """Everything the llm backend needs. The API key never appears in repr() or describe()."""

    base_url: str
    api_key: str = ""
    model: str = "gpt-4o-mini"  # the default for every stage without its own model
    planner_model: str | None = None
    executor_model: str | None = None
    verifier_model: str | None = None
    composer_model: str | None = None
    evaluator_model: str | None = None  # the LLM opinion beside the evidence score (server.worker)
    temperature: float | None = 0.0  # None: not sent (some reasoning models reject it)
    max_tokens: int | None = 2048  # None: not sent
    timeout: float = 60.0  # seconds per HTTP request, further capped by the call's deadline
    max_retries: int = 3  # retries after the first attempt, on 429 / 5xx / connection errors
    backoff_base: float = 0.5  # seconds; doubled per retry, with jitter
    backoff_max: float = 8.0
    max_tool_steps: int = 8  # tool calls the Executor may make per round
    json_mode: JsonMode = "auto"
    # What a stage does when its endpoint is down or its output stays unusable: run the offline
    # agent of that stage (recorded in the trace and said in the answer), or fail the session.
    planner_fallback: Fallback = "offline"
    executor_fallback: Fallback = "offline"
    verifier_fallback: Fallback = "offline"
    composer_fallback: Fallback = "offline"
    # Who writes the claims of the retry round after the Gatekeeper / Verifier rejected the model's:
    # the offline Executor over the same tool results (a weak model rarely mends its claims), or the
    # model again with the retry context. Only with executor_fallback = offline.
    executor_retry: Retry = "offline"
    # The planner's calls: those the offline planner reads off the question first, then the model's
    # (server.agents.llm.anchor), or the model's alone.
    planner_anchor: Anchor = "offline"

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError("LLMSettings.base_url is required")
        if self.json_mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {', '.join(JSON_MODES)}, not {self.json_mode!r}")
        for stage in FALLBACK_STAGES:
            if self.fallback_for(stage) not in FALLBACKS:
                raise ValueError(
                    f"{stage}_fallback must be offline or fail, not {self.fallback_for(stage)!r}"
                )
        if self.executor_retry not in RETRIES:
            raise ValueError(f"executor_retry must be offline or llm, not {self.executor_retry!r}")
        if self.planner_anchor not in ANCHORS:
            raise ValueError(f"planner_anchor must be offline or none, not {self.planner_anchor!r}")
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if (
            self.max_retries < 0
            or self.max_tool_steps < 0
            or (self.max_tokens is not None and self.max_tokens <= 0)
        ):
            raise ValueError("max_retries and max_tool_steps must be >= 0, max_tokens > 0")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise ValueError("backoff_base and backoff_max must be >= 0")

    def model_for(self, stage: Stage) -> str:
        specific: str | None = getattr(self, f"{stage}_model")
        return specific or self.model

    def fallback_for(self, stage: str) -> str:
        value: str = getattr(self, f"{stage}_fallback")
        return value

    def describe(self) -> dict[str, Any]:
        """The settings without secrets, for the start-up log."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["api_key"] = _mask(self.api_key)
        return out

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.describe().items())
        return f"LLMSettings({fields})"

    __str__ = __repr__

    @classmethod
    def from_settings(cls, llm: LlmSettings) -> LLMSettings:
        """The service's `llm` settings section (server.settings), the other fields their defaults."""
        return cls(
            base_url=llm.base_url,
            api_key=llm.api_key,
            model=llm.model,
            planner_model=llm.planner_model or None,
            executor_model=llm.executor_model or None,
            verifier_model=llm.verifier_model or None,
            composer_model=llm.composer_model or None,
            timeout=llm.timeout_s,
            max_retries=llm.max_retries,
            json_mode=llm.json_mode,
            planner_fallback=llm.planner_fallback,
            executor_fallback=llm.executor_fallback,
            verifier_fallback=llm.verifier_fallback,
            composer_fallback=llm.composer_fallback,
            executor_retry=llm.executor_retry,
            planner_anchor=llm.planner_anchor,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str], prefix: str = "EVIGATE_LLM_") -> LLMSettings:
        """Builds settings from `{prefix}BASE_URL`, `{prefix}API_KEY`, `{prefix}MODEL`,
        `{prefix}EXECUTOR_MODEL`, `{prefix}TIMEOUT`, ... (one variable per field, upper-cased)."""
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = env.get(prefix + f.name.upper())
            if raw is None or raw == "":
                continue
            kind = _FIELD_KINDS.get(f.name, str)
            try:
                kwargs[f.name] = kind(raw)
            except ValueError as exc:
                raise ValueError(f"{prefix}{f.name.upper()}: {exc}") from None
        if "base_url" not in kwargs:
            raise ValueError(f"{prefix}BASE_URL is required for the llm backend")
        return cls(**kwargs)


_FIELD_KINDS: dict[str, type] = {
    "temperature": float,
    "max_tokens": int,
    "timeout": float,
    "max_retries": int,
    "backoff_base": float,
    "backoff_max": float,
    "max_tool_steps": int,
}


def _mask(secret: str) -> str:
    return "***" if secret else ""
