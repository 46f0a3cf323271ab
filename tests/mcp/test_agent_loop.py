"""A scripted agent loop end to end: an OpenAI-compatible test server plays the model; the agent
offers it the MCP tools; the model calls query_logs, writes a claim on what it got, checks it with
check_claims, and answers with the Gatekeeper's decision."""

from __future__ import annotations

import json
from typing import Any

from openai import AsyncOpenAI

from tests.mcp.agent_loop import run_agent
from tests.mcp.clients import citing_first_ref, http_session
from tests.mcp.conftest import McpServer
from tests.support.fake_openai import FakeOpenAI, RecordedRequest, Step, reply, tool_call, tool_calls


def _last_tool_result(request: RecordedRequest) -> Any:
    return request.tool_results()[-1]


def _claim_on(request: RecordedRequest) -> Step:
    """The model writes one claim quoting the first item query_logs returned, and checks it."""
    found = _last_tool_result(request)
    evidence = citing_first_ref(found)
    return tool_calls(tool_call("check_claims", {"session_id": found["session_id"], "evidence": evidence}))


def _answer(request: RecordedRequest) -> Step:
    checked = _last_tool_result(request)
    return reply(f"Checked by evigate: decision {checked['decision']}.")


async def test_an_agent_gathers_evidence_writes_a_claim_and_checks_it(served: McpServer) -> None:
    with FakeOpenAI() as fake:
        fake.script(
            [
                tool_calls(tool_call("query_logs", {"service": "payment-service", "keyword": "超时"})),
                _claim_on,
                _answer,
            ]
        )
        model = AsyncOpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
        async with http_session(served.url) as mcp:
            answer, transcript = await run_agent(model, mcp, "Is payment-service timing out callbacks?")
        requests = fake.requests
    assert answer == "Checked by evigate: decision NONE."
    offered = {tool["function"]["name"] for tool in requests[0].tools}
    assert {"query_logs", "check_claims", "diagnose"} <= offered
    tool_messages = [json.loads(m["content"]) for m in transcript if m["role"] == "tool"]
    queried, checked = tool_messages
    assert queried["tool_name"] == "query_logs" and queried["status"] == "success"
    (binding,) = checked["bindings"]
    assert binding["status"] == "pass" and binding["source_invocation_id"] == queried["invocation_id"]
    assert len(requests) == 3 and fake.pending == 0
