"""Loads the versioned stage prompts from `prompts/<stage>.md`.

Each file starts with front matter::

    ---
    version: executor-v1
    ---

The version is recorded in the trace (StageOutput.prompt_version / ExecutorOutput.prompt_version), so a
prompt change is visible and comparable; bump it whenever the text changes.

What a prompt says about the tools is read from the tool registry, not written in the file:
`{{tool_names}}` becomes the registered tools' names, `{{raw_path_grammar}}` each tool's item path.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal, get_args

from evigate.rules.errors import EvigateError
from evigate.server.agents.llm.llm_settings import STAGES, Stage
from evigate.server.tools.registry import ToolRegistry, default_registry

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_VERSION = re.compile(r"^[a-z]+-v[0-9]+[a-z0-9.-]*$")


# a prompt that is not a stage's own: the Planner's follow-up (server.agents.llm.follow_up), asked
# with the Planner's endpoint after code's calls ran
Extra = Literal["followup"]
PROMPTS: tuple[str, ...] = (*STAGES, *get_args(Extra))


class PromptError(EvigateError, ValueError):
    """A prompt file is missing or malformed."""


@dataclass(frozen=True)
class Prompt:
    stage: str
    version: str
    text: str


def parse_prompt(stage: str, source: str) -> Prompt:
    match = _FRONT_MATTER.match(source)
    if match is None:
        raise PromptError(f"prompt {stage}: missing '---' front matter")
    meta: dict[str, str] = {}
    for line in match.group(1).splitlines():
        if line.strip():
            key, sep, value = line.partition(":")
            if not sep:
                raise PromptError(f"prompt {stage}: bad front matter line {line!r}")
            meta[key.strip()] = value.strip()
    version = meta.get("version", "")
    if not _VERSION.match(version) or not version.startswith(f"{stage}-"):
        raise PromptError(f"prompt {stage}: version must look like '{stage}-v1', got {version!r}")
    text = source[match.end() :].strip()
    if not text:
        raise PromptError(f"prompt {stage}: empty body")
    return Prompt(stage=stage, version=version, text=text)


_EXAMPLE_VALUE = re.compile(r'"[a-z_]+"\s*:\s*"([^"]{8,})"')
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|`[^`]*`|「[^」]*」")
_PHRASE_END = re.compile(r"[.。!！?？;；:：\n]")


def echo_phrases(prompt: Prompt) -> tuple[str, ...]:
    """What an answer must never repeat of this prompt: the string values of its JSON example
    (placeholders such as "one sentence") and its instruction sentences, quotes left out (the safe
    phrasing a prompt quotes is what an answer is meant to say)."""
    placeholders = _EXAMPLE_VALUE.findall(prompt.text)
    sentences = [
        part.strip(" -*,()")
        for part in _PHRASE_END.split(_QUOTED.sub("\n", prompt.text))
        if len(part.strip(" -*,()")) >= 30
    ]
    return tuple(dict.fromkeys([*placeholders, *sentences]))


def render_tools(text: str, registry: ToolRegistry) -> str:
    """The prompt text with its tool placeholders filled from the registry."""
    names = ", ".join(f"`{tool.name}`" for tool in registry)
    grammar = ", ".join(dict.fromkeys(f"`$.{tool.item_array}[i]`" for tool in registry))
    return text.replace("{{tool_names}}", names).replace("{{raw_path_grammar}}", grammar)


def load_prompt(stage: Stage | Extra) -> Prompt:
    """The stage's prompt, or the follow-up's (read once per process)."""
    return _load(stage)


@functools.cache
def _load(stage: str) -> Prompt:
    if stage not in PROMPTS:
        raise PromptError(f"unknown prompt {stage!r}")
    source = resources.files("evigate.server.agents.llm.prompts").joinpath(f"{stage}.md").read_text("utf-8")
    prompt = parse_prompt(stage, source)
    return Prompt(prompt.stage, prompt.version, render_tools(prompt.text, default_registry()))
