"""Code first, through the real pipeline: the term code read off the question finds nothing, the
model (asked for calls with the Planner's prompt) names the term as the logs write it, and code
quotes what that call found; the Gatekeeper passes the quote and the answer says it. The real
`openai` client talks to FakeOpenAI on 127.0.0.1; tools, storage and pipeline are real."""

from __future__ import annotations

import pytest

from evigate.server.agents.mix import build_agents
from evigate.server.deadline import Deadline
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline
from tests.support import llm_script as s
from tests.support.fake_openai import FakeOpenAI, json_reply

ALL_LLM = dict.fromkeys(("planner", "executor", "verifier", "composer"), "llm")
QUERY = "Is there a Python traceback in gateway's logs?"
ADDED = {"service": "gateway", "keyword": "502 Bad Gateway"}


@pytest.fixture
def db_backend() -> str:
    return "sqlite"  # the stages' behaviour is under test, not storage


async def test_the_model_s_term_finds_what_code_s_missed_and_code_quotes_it(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add(
        "planner", [json_reply({**s.PLAN, "tool_calls": [{"tool_name": "query_logs", "arguments": ADDED}]})]
    )
    agents = build_agents(ALL_LLM, s.settings(fake.base_url, planner_anchor="offline"))
    try:
        result = await build_pipeline(agents=agents).run(QUERY, None, "en", Deadline.after(20))
    finally:
        await agents.aclose()
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None

    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS"
    assert "502 Bad Gateway" in result.answer, result.answer
    notes = {(n["stage"], n["kind"]) for n in (trace.session.extras or {}).get("stage_notes", [])}
    assert {("executor", "model_asked"), ("executor", "model_calls_quoted"), ("executor", "by_code")} <= notes
    assert not [n for n in notes if n[1] in ("offline_fallback", "model_unused")]
    [follow_up] = [r for r in fake.requests if r.model == "planner"]
    assert follow_up.messages[-1]["content"] == "Is there a Python traceback in gateway's logs?"
    assert ("query_logs", ADDED) in [(i.tool_name, i.arguments) for i in trace.invocations]
