"""Qwen2.5-Instruct's chat template (as its GGUF carries it, `tokenizer.chat_template`), rendered the
way llama-cpp-python's server renders it: what a request becomes before the model reads it, so a
test can see which prefix two requests share byte for byte (the part llama.cpp does not read again).
The template puts the tools block into the first system turn, before any other message."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2.sandbox import ImmutableSandboxedEnvironment

JSON = dict[str, Any]
QWEN25 = (Path(__file__).parent / "qwen25_chat_template.jinja").read_text("utf-8")


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_ENVIRONMENT = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
_ENVIRONMENT.filters["tojson"] = _tojson
_TEMPLATE = _ENVIRONMENT.from_string(QWEN25)


def render(messages: Sequence[JSON], tools: Sequence[JSON] | None = None) -> str:
    """The prompt text the model reads for these messages and tools."""
    return _TEMPLATE.render(messages=list(messages), tools=list(tools or []), add_generation_prompt=True)
