"""Configuration of the llm agent backend (any OpenAI-compatible chat-completions endpoint)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from evigate.server.settings import Anchor, ConfigError, Fallback, JsonMode, Retry
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
class LLMSettings(LlmSettings):
    """Everything the llm backend needs: the service's `llm` settings section (server.settings),
    whose fields it inherits, and what only the client sets. The API key never appears in repr()
    or describe()."""

    model: str = "gpt-4o-mini"  # the default for every stage without its own model
    evaluator_model: str = ""  # the LLM opinion beside the evidence score (server.worker)
    temperature: float | None = 0.0  # None: not sent (some reasoning models reject it)
    max_tokens: int | None = 2048  # None: not sent
    backoff_base: float = 0.5  # seconds; doubled per retry, with jitter
    backoff_max: float = 8.0
    max_tool_steps: int = 8  # tool calls the Executor may make per round

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError("LLMSettings.base_url is required")
        try:
            self.validate()  # the section's own choices
        except ConfigError as error:
            raise ValueError(str(error).removeprefix("llm_")) from None
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
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
        """The service's `llm` settings section, the client's own fields their defaults (an empty
        `llm_model`: the default model)."""
        values = {f.name: getattr(llm, f.name) for f in dataclasses.fields(llm)}
        if not values["model"]:
            del values["model"]
        return cls(**values)

    @classmethod
    def from_env(cls, env: Mapping[str, str], prefix: str = "EVIGATE_LLM_") -> LLMSettings:
        """Builds settings from `{prefix}BASE_URL`, `{prefix}API_KEY`, `{prefix}MODEL`,
        `{prefix}EXECUTOR_MODEL`, `{prefix}TIMEOUT_S`, ... (one variable per field, upper-cased)."""
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
    "timeout_s": float,
    "max_retries": int,
    "backoff_base": float,
    "backoff_max": float,
    "max_tool_steps": int,
}


def _mask(secret: str) -> str:
    return "***" if secret else ""
