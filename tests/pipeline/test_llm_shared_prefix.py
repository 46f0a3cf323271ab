"""Every request starts with the same bytes, as the model reads them: the preamble and the tools
block; then the stage's own instructions, the same in each of its requests; then the question
(server.agents.llm.budget). A local server (llama.cpp) keeps the prefix a request shares with a
request before and reads only the rest; Qwen's chat template puts the tools into the first system
turn, so a stage declaring other tools (or none) would share only the preamble. Requests are
rendered with that template."""

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


def _block(request: RecordedRequest) -> str:
    """The request's part shared by every request, as rendered: the preamble with the tools block."""
    return render(request.messages[:1], request.tools).removesuffix(GENERATION)


async def test_every_stage_s_requests_share_the_tools_block_then_read_their_instructions(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite()])
    requests = await _ask(build_pipeline, fake, HIGH_CPU)

    stages = [r.model for r in requests]
    assert set(stages) == {"planner", "executor", "verifier", "composer"}, stages
    assert all(r.tools == shared_tools() for r in requests)  # one tools block, whatever the stage
    prompts = [render(r.messages, r.tools) for r in requests]
    block = _block(requests[0])
    assert PREAMBLE in block and "</tools>" in block
    assert _common(prompts).startswith(block), "a stage's request differs before its instructions"
    # what follows is the stage's own instructions, then the question
    for request, prompt in zip(requests, prompts, strict=True):
        own = f"<|im_start|>system\n{load_prompt(str(request.model)).text}<|im_end|>\n"  # type: ignore[arg-type]
        assert prompt[len(block) :].startswith(f"{own}<|im_start|>user\nQuestion: {HIGH_CPU}<|im_end|>")


async def test_a_stage_s_requests_in_two_sessions_share_everything_before_the_question(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call(), s.cite()])
    first = await _ask(build_pipeline, fake, HIGH_CPU)
    script.add("executor", [s.call(), s.cite()])
    second = await _ask(build_pipeline, fake, OTHER)

    block = _block(first[0])
    assert _common([render(r.messages, r.tools) for r in [*first, *second]]).startswith(block)
    for stage in ("planner", "composer"):
        same = [render(r.messages, r.tools) for r in [*first, *second] if r.model == stage]
        assert len(same) == 2, stage
        own = f"{block}<|im_start|>system\n{load_prompt(stage).text}<|im_end|>\n<|im_start|>user\nQuestion: "
        common = _common(same)
        assert common.startswith(own) and HIGH_CPU not in common  # then each session's own question
