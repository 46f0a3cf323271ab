"""A question that states a problem ("HikariCP connections are timing out on order-service") is
investigated with the runbook for it: the statement itself is the knowledge query, a runbook found
is cited, and none found adds nothing (no runbook was asked for, so "no runbook" is no finding)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from evigate.server.agents.base import JSON
from evigate.server.agents.offline.executor import OfflineExecutor
from evigate.server.pipeline.parse import parse_executor_output
from evigate.server.understanding.entities import extract
from evigate.server.understanding.statements import states_a_problem
from tests.agents.offline.demo_catalog import TEST_CATALOG, TEST_VIEW
from tests.agents.offline.fakes import FakeToolBox, make_task


@dataclass
class ToolBoxWithKnowledge(FakeToolBox):
    """The fake tools, registered as a session with a knowledge base has them."""

    def __hash__(self) -> int:
        return id(self)

    def schemas(self) -> list[JSON]:
        names = ("query_metrics", "query_logs", "lookup_knowledge")
        return [{"type": "function", "function": {"name": name}} for name in names]


@pytest.mark.parametrize(
    ("question", "states"),
    [
        ("HikariCP connections are timing out on order-service", True),
        ("order-service is returning 502 errors. Please investigate.", True),
        ("order-service 出现 HikariCP 连接池耗尽。", True),
        ("order-service 的接口超时了，请调查。", True),
        ("Is order-service timing out?", False),
        ("order-service 有没有 HikariCP 连接池耗尽的日志？", False),
        ("Show me the ERROR logs of order-service", False),
        ("列出 order-service 日志里所有的错误", False),
        ("Tell me a joke.", False),
    ],
)
def test_a_problem_stated_is_told_from_a_question_asked(question: str, states: bool) -> None:
    assert states_a_problem(question, extract(question, TEST_VIEW)) is states


async def run(question: str, language: str) -> tuple[JSON, ToolBoxWithKnowledge]:
    tools = ToolBoxWithKnowledge()
    output = await OfflineExecutor(catalog=TEST_CATALOG).execute(make_task(tools, question, language))
    data, status = parse_executor_output(output.raw_text)
    assert status["status"] == "valid", status
    return data, tools


async def test_the_runbook_for_a_stated_problem_is_looked_up_and_cited() -> None:
    question = "HikariCP connections are timing out on order-service"
    data, tools = await run(question, "en")
    assert ("lookup_knowledge", {"query": question}) in tools.calls
    lookup = next(r for r in tools.results if r.tool_name == "lookup_knowledge")
    cited = {b["source_invocation_id"] for claim in data["claims"] for b in claim["evidence_bindings"]}
    assert lookup.invocation_id in cited


async def test_no_runbook_for_a_stated_problem_adds_no_claim() -> None:
    data, tools = await run("order-service 的接口超时了，请调查。", "zh")
    lookup = next(r for r in tools.results if r.tool_name == "lookup_knowledge")
    assert lookup.retrieval_details["evidence_status"] == "no_evidence"
    cited = {b["source_invocation_id"] for claim in data["claims"] for b in claim["evidence_bindings"]}
    assert lookup.invocation_id not in cited
    assert not any("知识库" in line for line in data["missing_info"])


async def test_a_question_asked_is_no_knowledge_query() -> None:
    question = "Is order-service timing out?"
    _, tools = await run(question, "en")
    assert ("lookup_knowledge", {"query": question}) not in tools.calls
