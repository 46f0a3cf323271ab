"""Every stage on an endpoint that answers, but not with a chat completion: the session still ends
SUCCESS on the offline agents, each stage's fallback names what came back, and the answer says so.
The real `openai` client talks to FakeOpenAI on 127.0.0.1; tools, storage and pipeline are real."""

from __future__ import annotations

import dataclasses

import pytest

from evigate.server.agents.mix import build_agents
from evigate.server.cli import render
from evigate.server.deadline import Deadline
from evigate.server.grpc import convert
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline
from tests.support import llm_script as s
from tests.support.fake_openai import Drip, FakeOpenAI, Raw, Reply, Step

HIGH_CPU = "payment-service 现在有 HighCPUUsage 告警吗？"
STAGES = ["planner", "executor", "verifier", "composer"]
ALL_LLM = dict.fromkeys(STAGES, "llm")
TRUNCATED = '{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": "'
FAULTS: dict[str, tuple[Step, str]] = {
    "html page": (Raw("<html><body>Sign in</body></html>", content_type="text/html"), "endpoint_bad_reply"),
    "truncated json": (Raw(TRUNCATED), "endpoint_bad_reply"),
    "error body under 200": (Raw({"error": {"message": "overloaded"}}), "endpoint_bad_reply"),
    "content null": (Reply(content=None), "unusable_output"),
    "very slow stream": (Drip(interval=1.0), "endpoint_unavailable"),
}


@pytest.fixture
def db_backend() -> str:
    return "sqlite"  # the stages' behaviour is under test, not storage


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_every_stage_falls_back_with_a_named_reason(
    fault: str, db: Database, build_pipeline: BuildPipeline
) -> None:
    step, reason = FAULTS[fault]
    settings = dataclasses.replace(s.settings("http://unused/v1"), timeout_s=0.5, max_retries=0)
    with FakeOpenAI(default=step) as fake:
        agents = build_agents(ALL_LLM, dataclasses.replace(settings, base_url=fake.base_url))
        try:
            result = await build_pipeline(agents=agents).run(HIGH_CPU, None, "zh", Deadline.after(60))
        finally:
            await agents.aclose()
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    notes = [n for n in convert.trace(trace).stage_notes if n.kind == "offline_fallback"]
    fell_back = {n.stage for n in notes}
    assert {"planner", "executor", "verifier"} <= fell_back
    assert all(n.detail.startswith(reason) for n in notes if n.stage != "composer"), [n.detail for n in notes]
    assert "注：以下阶段改用离线规则运行" in result.answer
    assert "offline_fallback — " + reason in render.trace(convert.trace(trace))
