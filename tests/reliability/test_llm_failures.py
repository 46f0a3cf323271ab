"""The LLM endpoint failing (refused connections, 500s, hangs) with every stage's fallback set to
`fail`: sessions end FAILED with a reason and a full trace, and the server stays healthy and keeps
serving. (With the default `offline` fallback the stages run offline instead:
tests/pipeline/test_llm_degrade.py.)"""

from __future__ import annotations

from collections.abc import Callable

import grpc
from grpc_health.v1 import health_pb2

from evigate.v1 import session_pb2
from tests.reliability.conftest import ServerFactory
from tests.reliability.procs import Client, free_port
from tests.support.fake_openai import Error, FakeOpenAI, Hang, RecordedRequest, Step, json_reply

FAILED = session_pb2.SESSION_STATUS_FAILED
SERVING = health_pb2.HealthCheckResponse.SERVING
KEY = {"EVIGATE_LLM_API_KEY": "sk-test"}  # secrets never on the command line
QUERY = "Does payment-service have a HighCPUUsage alert right now?"
PLAN = {
    "selected_skill": "diagnose-high-cpu",
    "selection_reason": "the question names HighCPUUsage",
    "plan": ["query_metrics(service=payment-service, alert_name=HighCPUUsage)"],
    "reasoning": "",
}


def _llm_args(base_url: str, timeout_s: float) -> list[str]:
    args = ["--agent-backend", "llm", "--llm-base-url", base_url]
    args += ["--llm-model", "any", "--llm-planner-model", "planner", "--llm-executor-model", "executor"]
    args += [f"--llm-{stage}-fallback=fail" for stage in ("planner", "executor", "verifier", "composer")]
    args += ["--llm-planner-anchor", "none"]  # every stage asks the model, so each one's failure shows
    return [*args, "--llm-timeout-s", str(timeout_s), "--llm-max-retries", "1"]


async def _failed_session(client: Client, session_id: str, stage: str) -> str:
    """Chat ends FAILED (an OK call carrying the failure), and GetTrace replays what happened."""
    reply = await client.chat(QUERY, session_id=session_id, language="en", rpc_timeout=30)
    assert reply.status == FAILED
    assert stage in reply.failure_reason, reply.failure_reason
    # ended by the LLM's own timeout or error, not by the call's 30 s deadline
    assert "deadline exceeded" not in reply.failure_reason, reply.failure_reason
    trace = (await client.trace(session_id)).trace
    assert trace.session.status == FAILED
    assert trace.session.failure_reason == reply.failure_reason
    assert trace.stage_latencies, "the trace keeps how far each stage got"
    assert trace.agent_backend == "llm" or trace.planner_plan.plan or stage == "planner"
    health = await client.health_stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
    assert health.status == SERVING
    return reply.failure_reason


async def test_refused_connections_fail_the_session_and_the_server_stays_healthy(
    servers: ServerFactory, sqlite_url: str
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    server = servers(sqlite_url, args=_llm_args(closed, 2.0), env=KEY)
    await server.start().wait_ready()
    async with grpc.aio.insecure_channel(server.address) as channel:
        client = Client(channel)
        for n in range(3):
            reason = await _failed_session(client, f"refused-{n}", "planner")
            assert "Connection" in reason or "connect" in reason.lower(), reason
        listed = await client.trace_stub.ListSessions(_list_failed(), timeout=5)
        assert {s.session_id for s in listed.sessions} == {"refused-0", "refused-1", "refused-2"}
    assert server.proc is not None and server.proc.poll() is None


def _list_failed() -> object:
    from evigate.v1 import trace_service_pb2

    return trace_service_pb2.ListSessionsRequest(status=session_pb2.SESSION_STATUS_FAILED)


async def test_500s_and_hangs_fail_the_session_with_full_traces(
    servers: ServerFactory, sqlite_url: str
) -> None:
    modes: dict[str, Step | Callable[[RecordedRequest], Step]] = {
        "planner": json_reply(PLAN),
        "executor": Error(500, "upstream exploded"),
    }

    def respond(request: RecordedRequest) -> Step:
        mode = modes[request.model or "planner"]
        return mode(request) if callable(mode) else mode

    with FakeOpenAI(default=respond) as fake:
        server = servers(sqlite_url, args=_llm_args(fake.base_url, 1.0), env=KEY)
        await server.start().wait_ready()
        async with grpc.aio.insecure_channel(server.address) as channel:
            client = Client(channel)
            reason = await _failed_session(client, "http-500", "executor")
            assert "500" in reason or "InternalServerError" in reason, reason
            trace = (await client.trace("http-500")).trace
            assert trace.planner_plan.selected_skill == "diagnose-high-cpu"  # the plan survived
            executor_calls = [r for r in fake.requests if r.model == "executor"]
            assert len(executor_calls) == 2  # one retry, then the session gave up

            modes["executor"] = Hang()
            reason = await _failed_session(client, "hang", "executor")
            assert "imeout" in reason or "timed out" in reason.lower(), reason
            hung = [r for r in fake.requests if r.model == "executor"][2:]
            assert hung and all(r.wait_disconnected(5) for r in hung)  # the client gave up on them

            modes["planner"] = Error(503, "overloaded")
            reason = await _failed_session(client, "planner-503", "planner")
            # The server keeps answering: health, traces and lists work between failures.
            for sid in ("http-500", "hang", "planner-503"):
                assert (await client.trace(sid)).trace.session.status == FAILED
        assert server.proc is not None and server.proc.poll() is None
