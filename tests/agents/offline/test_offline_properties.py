"""Invariants of the offline Executor over generated narrow questions (hypothesis):
its citations always pass the Gatekeeper, its claims are always derivable, it never widens."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.server.agents.offline.executor import OfflineExecutor
from evigate.server.agents.offline.verifier import verify
from evigate.server.pipeline.parse import parse_executor_output
from tests.agents.offline.demo_catalog import TEST_CATALOG
from tests.agents.offline.fakes import FakeToolBox, gatekeeper_result, make_task

SERVICES = ["payment-service", "order-service", "inventory-service", "user-service", "api-gateway"]
ALERTS = ["HighCPUUsage", "HighErrorRate", "PodRestart", "HighLatency"]
TERMS_ZH = ["HikariCP 连接池耗尽", "HikariPool-1", "OutOfMemoryError", "超时", "ERROR"]
TERMS_EN = ["HikariCP pool exhaustion", "HikariPool-1", "OutOfMemoryError", "timeout", "ERROR"]
WINDOWS_ZH = ["", "最近30分钟", "最近1小时", "过去两小时"]
WINDOWS_EN = ["", " in the last 30 minutes", " in the last hour", " in the past 2 hours"]


@st.composite
def questions(draw: st.DrawFn) -> tuple[str, str]:
    language = draw(st.sampled_from(["zh", "en"]))
    service = draw(st.sampled_from(SERVICES))
    if draw(st.booleans()):
        alert = draw(st.sampled_from(ALERTS))
        now = draw(st.booleans())
        if language == "zh":
            return f"{service} {'现在' if now else ''}有 {alert} 告警吗？", language
        return f"Is there a {alert} alert {'firing right now ' if now else ''}on {service}?", language
    index = draw(st.integers(0, len(TERMS_ZH) - 1))
    window = draw(st.integers(0, len(WINDOWS_ZH) - 1))
    if language == "zh":
        return f"{service} {WINDOWS_ZH[window]}有没有 {TERMS_ZH[index]} 日志？", language
    return f"Any {TERMS_EN[index]} logs for {service}{WINDOWS_EN[window]}?", language


async def _run(question: str, language: str) -> None:
    tools = FakeToolBox()
    output = await OfflineExecutor(catalog=TEST_CATALOG).execute(make_task(tools, question, language))
    data, status = parse_executor_output(output.raw_text)
    assert status["status"] == "valid"
    gate = gatekeeper_result(data, tools)
    assert gate["severity"] == "none", (question, gate["errors"])
    assert 1 <= len(data["claims"]) <= 2
    verdict = verify(
        {
            "original_query": question,
            "executor_structured_output": data,
            "executor_output_parse_status": status,
            "gatekeeper_result": gate,
        }
    )
    assert verdict["verdict"] == "PASS", (question, verdict["rationale"])
    # Never widened but in time: one target, the same arguments but for the window (an alert query
    # not about this moment looks 6 h and 24 h back), and every call names the question's service.
    targets = {
        (tool, tuple(sorted((k, v) for k, v in args.items() if k != "since"))) for tool, args in tools.calls
    }
    assert len(targets) == 1
    assert all(str(arguments.get("service")) in question for _, arguments in tools.calls)


@settings(max_examples=80, deadline=None)
@given(questions())
def test_generated_questions_pass_the_gatekeeper_and_verifier(question: tuple[str, str]) -> None:
    asyncio.run(_run(*question))
