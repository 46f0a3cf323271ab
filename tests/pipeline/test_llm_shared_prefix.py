"""Every request of a session starts with the same bytes, as the model reads them: the preamble, the
tools block and the question, then the stage's own instructions (server.agents.llm.budget). A local
server (llama.cpp) keeps the prefix a request shares with the one before and reads only the rest;
Qwen's chat template puts the tools into the first system turn, so a stage declaring other tools
(or none) would share only the preamble. Requests are rendered with that template."""

from __future__ import annotations

import pytest

from evigate.server.agents.llm.budget import PREAMBLE, shared_prefix, shared_tools
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.mix import build_agents
from evigate.server.deadline import Deadline
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline
from tests.support import llm_script as s
from tests.support.chat_template import render
from tests.support.fake_openai import FakeOpenAI, RecordedRequest

ALL_LLM = dict.fromkeys(("planner", "executor", "verifier", "composer"), "llm")
HIGH_CPU = "payment-service 现在有 HighCPUUsage 告警吗？"
OTHER = "payment-service 的 HighCPUUsage 告警还在吗？"
GENERATION = "<|im_start|>assistant\n"


@pytest.fixture
def db_backend() -> str:
    return "sqlite"  # the requests are under test, not storage


async def _ask(build_pipeline: BuildPipeline, fake: FakeOpenAI, query: str) -> list[RecordedRequest]:
    before = len(fake.requests)
    agents = build_agents(ALL_LLM, s.settings(fake.base_url))
    try:
        result = await build_pipeline(agents=agents).run(query, None, "zh", Deadline.after(20))
    finally:
        await agents.aclose()
    assert result.status == "SUCCESS"
    return fake.requests[before:]


def _common(prompts: list[str]) -> str:
    """What every prompt starts with."""
    return prompts[0][: min(shared_prefix(prompts[0], prompt) for prompt in prompts)]


def _head(request: RecordedRequest) -> str:
    """The request's shared part as rendered: the preamble with the tools block, and the question."""
    return render(request.messages[:2], request.tools).removesuffix(GENERATION)


async def test_every_stage_s_requests_share_the_prefix_through_the_question(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite()])
    requests = await _ask(build_pipeline, fake, HIGH_CPU)

    stages = [r.model for r in requests]
    assert set(stages) == {"planner", "executor", "verifier", "composer"}, stages
    assert all(r.tools == shared_tools() for r in requests)  # one tools block, whatever the stage
    prompts = [render(r.messages, r.tools) for r in requests]
    head = _head(requests[0])
    assert head.endswith(f"Question: {HIGH_CPU}<|im_end|>\n") and PREAMBLE in head
    common = _common(prompts)
    assert common.startswith(head), "a stage's request differs before the question ends"
    # what follows is the stage's own: its instructions first
    for request, prompt in zip(requests, prompts, strict=True):
        stage = str(request.model)
        assert prompt[len(head) :].startswith(f"<|im_start|>system\n{load_prompt(stage).text}")  # type: ignore[arg-type]


async def test_the_preamble_and_tools_block_are_shared_across_sessions(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite()])
    first = await _ask(build_pipeline, fake, HIGH_CPU)
    script.add("executor", [s.call(), s.cite()])
    second = await _ask(build_pipeline, fake, OTHER)

    common = _common([render(r.messages, r.tools) for r in [*first, *second]])
    block = render(first[0].messages[:1], first[0].tools).removesuffix(GENERATION)
    assert "</tools>" in block and common.startswith(f"{block}<|im_start|>user\nQuestion: ")
    assert HIGH_CPU not in common  # then each session's own question
