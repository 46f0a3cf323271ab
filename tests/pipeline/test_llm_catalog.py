"""The LLM backend gets the service catalog too: `list_services` is among the tools offered to the
Executor, and a scripted model that resolves a Chinese service name with it, then queries the
canonical name, passes (scripted OpenAI server on 127.0.0.1, real fixture tools, real storage)."""

from __future__ import annotations

from evigate.server.agents.base import AgentBackend
from evigate.server.deadline import Deadline
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline
from tests.support import llm_script as s
from tests.support.fake_openai import FakeOpenAI


async def test_the_llm_executor_resolves_a_service_name_with_list_services(
    db: Database, build_pipeline: BuildPipeline, agents: AgentBackend, fake: FakeOpenAI, script: s.StageScript
) -> None:
    script.add("executor", [s.call("list_services", {"name": "支付服务"}), s.call(), s.cite()])
    result = await build_pipeline(agents=agents).run(
        "支付服务现在有 HighCPUUsage 告警吗？", None, "zh", Deadline.after(20)
    )
    assert result.status == "SUCCESS" and result.verdict is not None
    assert result.verdict["verdict"] == "PASS", result.verdict
    trace = await db.repo.get_trace(result.session_id)
    assert trace is not None
    resolved, queried = trace.invocations[0], trace.invocations[1]
    assert resolved.tool_name == "list_services"
    (ref,) = resolved.retrieval_details["evidence_refs"]
    assert ref["text"].startswith("payment-service, ") and "matched=alias" in ref["text"]
    assert queried.tool_name == "query_metrics" and queried.arguments["service"] == "payment-service"
    executor = next(r for r in fake.requests if r.model == "executor")
    offered = {tool["function"]["name"] for tool in executor.body.get("tools", [])}
    assert {"list_services", "query_metrics", "query_logs"} <= offered
