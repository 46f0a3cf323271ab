"""The llm agent backend: any OpenAI-compatible chat-completions endpoint, through `openai`."""

from evigate.server.agents.llm.agents import (
    LLMComposer,
    LLMExecutor,
    LLMPlanner,
    LLMVerifier,
    build_llm_backend,
)
from evigate.server.agents.llm.client import (
    ChatReply,
    LLMClient,
    LLMError,
    LLMOutputError,
    LLMUnavailableError,
    ToolCallRequest,
    extract_json,
)
from evigate.server.agents.llm.llm_settings import LLMSettings, Stage
from evigate.server.agents.llm.prompt_loader import Prompt, PromptError, load_prompt
from evigate.server.settings import JsonMode

__all__ = [
    "ChatReply",
    "JsonMode",
    "LLMClient",
    "LLMComposer",
    "LLMError",
    "LLMExecutor",
    "LLMOutputError",
    "LLMPlanner",
    "LLMSettings",
    "LLMUnavailableError",
    "LLMVerifier",
    "Prompt",
    "PromptError",
    "Stage",
    "ToolCallRequest",
    "build_llm_backend",
    "extract_json",
    "load_prompt",
]
