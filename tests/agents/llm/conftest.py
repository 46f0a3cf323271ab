"""Fixtures of the llm backend tests: a scripted OpenAI-compatible server and a fake ToolBox."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import pytest

from evigate.server.agents.base import JSON
from evigate.server.agents.llm import LLMClient, LLMSettings
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from tests.support.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRET-0123456789"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def settings(fake: FakeOpenAI) -> LLMSettings:
    return LLMSettings(
        base_url=fake.base_url,
        api_key=SECRET,
        model="test-model",
        executor_model="test-executor",
        timeout_s=5.0,
        max_retries=3,
        backoff_base=0.01,
        backoff_max=0.05,
        max_tool_steps=4,
        json_mode="auto",
    )


@pytest.fixture
async def client(settings: LLMSettings) -> AsyncIterator[LLMClient]:
    llm = LLMClient(settings)
    yield llm
    await llm.aclose()


def _schema(name: str) -> JSON:
    return {
        "type": "function",
        "function": {"name": name, "description": name, "parameters": {"type": "object", "properties": {}}},
    }


ALERT = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=critical"
NO_LOGS = (
    "query_logs returned no evidence; evidence_status=no_evidence; query=inventory-service HikariCP; total=0"
)


class FakeToolBox:
    """Answers query_metrics with one alert and query_logs with no evidence; records every call."""

    def __init__(self, first_id: int = 517) -> None:
        self.calls: list[tuple[str, dict[str, Any], Deadline]] = []
        self._next_id = first_id

    def schemas(self) -> list[JSON]:
        return [_schema("query_metrics"), _schema("query_logs"), _schema("lookup_knowledge")]

    async def call(self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline) -> ToolCallResult:
        self.calls.append((tool_name, dict(arguments), deadline))
        invocation_id = self._next_id
        self._next_id += 1
        if tool_name not in {"query_metrics", "query_logs", "lookup_knowledge"}:
            return ToolCallResult(
                invocation_id=invocation_id,
                tool_name=tool_name,
                arguments=dict(arguments),
                status="failed",
                error=f"unknown tool {tool_name!r}",
                raw_result=None,
                retrieval_details={"evidence_status": "failed", "match_level": "none", "evidence_refs": []},
            )
        if tool_name == "query_metrics":
            details: JSON = {
                "evidence_status": "supported",
                "match_level": "L0",
                "evidence_refs": [{"raw_path": "$.alerts[0]", "text": ALERT}],
            }
        else:
            details = {
                "evidence_status": "no_evidence",
                "match_level": "none",
                "evidence_refs": [{"raw_path": "$.no_evidence", "text": NO_LOGS}],
            }
        return ToolCallResult(
            invocation_id=invocation_id,
            tool_name=tool_name,
            arguments=dict(arguments),
            status="success",
            error=None,
            raw_result={},
            retrieval_details=details,
        )


@pytest.fixture
def toolbox() -> FakeToolBox:
    return FakeToolBox()
