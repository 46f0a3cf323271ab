"""The MCP tools through the SDK's own client, over stdio and over streamable HTTP: the catalog and
its schemas, a checked diagnosis, the Gatekeeper as a tool, the read side, and bad input answered
as a clear tool error."""

from __future__ import annotations

import json

from tests.mcp.clients import DEMO_QUESTION, call, citing_first_ref, refused
from tests.mcp.conftest import Connect

EVIDENCE_TOOLS = {"query_metrics", "query_logs", "lookup_knowledge", "query_promql", "summarize_logs"}
SERVICE_TOOLS = {"diagnose", "check_claims", "get_trace", "list_sessions", "list_cases", "feedback"}


async def test_the_tools_are_listed_with_their_json_schemas(connect: Connect) -> None:
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) >= EVIDENCE_TOOLS | SERVICE_TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and tool.description
    logs = tools["query_logs"].input_schema
    assert {"service", "keyword", "level", "session_id"} <= set(logs["properties"])
    assert logs["additionalProperties"] is False
    assert tools["query_logs"].annotations is not None and tools["query_logs"].annotations.read_only_hint
    check = tools["check_claims"].input_schema
    assert check["required"] == ["session_id", "evidence"]
    claim = check["$defs"]["Claim"]["properties"]
    assert set(claim["claim_type"]["enum"]) == {
        *("observation", "negative_observation", "symptom", "root_cause")
    }
    assert tools["diagnose"].input_schema["required"] == ["question"]


async def test_diagnose_returns_a_checked_pass_answer_and_its_trace(connect: Connect) -> None:
    async with connect() as client:
        answer = await call(client, "diagnose", question=DEMO_QUESTION)
        trace = await client.read_resource(answer["trace_uri"])
    assert answer["status"] == "SUCCESS" and answer["verdict"] == "PASS", answer
    claim_ids = {claim["claim_id"] for claim in answer["claims"]}
    assert claim_ids and "92%" in answer["answer"]
    for claim in answer["claims"]:
        assert claim["evidence_bindings"], claim
        assert all(b["source_invocation_id"] for b in claim["evidence_bindings"])
    assert answer["sentences"] and any(s["claim_ids"] for s in answer["sentences"]), answer["sentences"]
    for sentence in answer["sentences"]:  # the Composer's sentences name only claims returned here
        assert set(sentence["claim_ids"]) <= claim_ids
    stored = json.loads(trace.contents[0].text)  # type: ignore[union-attr]
    assert stored["session"]["session_id"] == answer["session_id"]
    assert stored["session"]["answer"] == answer["answer"]


async def test_check_claims_passes_a_true_citation_and_rejects_a_forged_one(connect: Connect) -> None:
    async with connect() as client:
        query = await call(client, "query_logs", service="payment-service", keyword="超时")
        session = query["session_id"]
        valid = await call(client, "check_claims", session_id=session, evidence=citing_first_ref(query))
        forged_text = citing_first_ref(query, excerpt="payment-service crashed with OutOfMemoryError")
        forged = await call(client, "check_claims", session_id=session, evidence=forged_text)
        unknown_call = citing_first_ref(query, invocation=query["invocation_id"] + 10_000)
        forged_call = await call(client, "check_claims", session_id=session, evidence=unknown_call)
    assert query["status"] == "success" and query["evidence_status"] == "supported"
    assert session.startswith("agent-")
    assert valid["decision"] == "NONE", (valid["errors"], valid["bindings"])
    assert forged["decision"] == "REJECT" and forged_call["decision"] == "REJECT"
    assert all(b["status"] == "PASS".lower() and not b["rules"] for b in valid["bindings"])
    (bad,) = forged["bindings"]
    assert bad["status"] == "fail" and bad["rules"], forged
    assert {r["id"] for r in forged["failed_rules"]} >= set(bad["rules"])
    assert forged_call["failed_rules"] and all(r["description"] for r in forged_call["failed_rules"])


async def test_query_calls_of_one_agent_session_accumulate_in_its_trace(connect: Connect) -> None:
    async with connect() as client:
        first = await call(client, "query_metrics", service="payment-service")
        second = await call(client, "lookup_knowledge", query="HighCPUUsage", session_id=first["session_id"])
        trace = await call(client, "get_trace", session_id=first["session_id"])
        listed = await call(client, "list_sessions", status="AGENT", limit=50)
        failed = await call(client, "list_sessions", status="FAILED", limit=50)
    assert second["session_id"] == first["session_id"]
    assert [i["id"] for i in trace["invocations"]] == [first["invocation_id"], second["invocation_id"]]
    (agent,) = [s for s in listed["sessions"] if s["session_id"] == first["session_id"]]
    assert agent["status"] == "AGENT" and agent["failure_reason"] is None
    assert trace["session"]["status"] == "AGENT"
    assert first["session_id"] not in {s["session_id"] for s in failed["sessions"]}


async def test_bad_arguments_are_clear_tool_errors_not_crashes(connect: Connect) -> None:
    async with connect() as client:
        bad_id = await refused(client, "get_trace", session_id="no spaces allowed")
        missing = await refused(client, "get_trace", session_id="never-ran")
        empty = await refused(client, "diagnose", question="   ")
        wrong_type = await refused(client, "list_sessions", limit="many")
        unknown_arg = await refused(client, "query_logs", colour="red")
        half_claim = {"claims": [{"claim_id": "c"}]}
        bad_claim = await refused(client, "check_claims", session_id="never-ran", evidence=half_claim)
        no_session = await refused(client, "check_claims", session_id="never-ran", evidence={"claims": []})
        bad_limit = await refused(client, "list_cases", limit=-1)
        alive = await call(client, "list_sessions")  # the server is still there
    assert "session_id: must be 1–64 characters" in bad_id
    assert "NOT_FOUND" in missing and "never-ran" in missing
    assert "question: required" in empty
    assert "limit" in wrong_type
    assert "colour" in unknown_arg
    assert "claim_type" in bad_claim and "claim_text" in bad_claim
    assert "NOT_FOUND" in no_session
    assert "limit: must not be negative" in bad_limit
    assert "sessions" in alive


async def test_query_tools_add_calls_only_to_agent_sessions(connect: Connect) -> None:
    async with connect() as client:
        answer = await call(client, "diagnose", question=DEMO_QUESTION)
        refusal = await refused(
            client, "query_logs", service="payment-service", session_id=answer["session_id"]
        )
        trace = await call(client, "get_trace", session_id=answer["session_id"])
    assert "NOT_AN_AGENT_SESSION" in refusal
    added = [i for i in trace["invocations"] if i["arguments"] == {"service": "payment-service"}]
    assert not [i for i in added if i["tool_name"] == "query_logs"]


async def test_resources_serve_the_runbooks_and_the_tool_catalog(connect: Connect) -> None:
    async with connect() as client:
        index = json.loads((await client.read_resource("evigate://runbooks")).contents[0].text)  # type: ignore[union-attr]
        first = await client.read_resource(index[0]["uri"])
        catalog = json.loads((await client.read_resource("evigate://tools/catalog")).contents[0].text)  # type: ignore[union-attr]
    names = {entry["name"] for entry in index}
    assert "runbook-kafka-consumer-lag.en.md" in names
    assert first.contents[0].text.startswith(("---", "#"))  # type: ignore[union-attr]
    logs = next(tool for tool in catalog if tool["name"] == "query_logs")
    assert logs["cited_as"] == ["$.logs[i]", "$.no_evidence"]


async def test_feedback_makes_a_useful_answer_a_case_once(connect: Connect) -> None:
    async with connect() as client:
        answer = await call(client, "diagnose", question=DEMO_QUESTION)
        session = answer["session_id"]
        first = await call(client, "feedback", session_id=session, value="useful", note="spot on")
        again = await call(client, "feedback", session_id=session, value="useful")
        trace = await call(client, "get_trace", session_id=session)
        cases = await call(client, "list_cases", limit=100)
        listed = await call(client, "list_sessions", feedback="useful", limit=100)
        wrong_word = await refused(client, "feedback", session_id=session, value="great")
        too_long = await refused(client, "feedback", session_id=session, value="useful", note="x" * 2001)
        bad_token = await refused(client, "list_sessions", page_token="t" * 2000)
    assert first["case_id"] and again["case_id"] == first["case_id"]
    assert trace["session"]["extras"]["feedback_note"] == {"feedback": "useful", "note": "spot on"}
    assert [c["diagnosis_id"] for c in cases["cases"]].count(session) == 1
    assert session in {s["session_id"] for s in listed["sessions"]}
    assert "value" in wrong_word and "note: at most 2000 characters" in too_long
    assert "page_token: not a token issued by this service" in bad_token
