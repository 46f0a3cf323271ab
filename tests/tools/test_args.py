from __future__ import annotations

from typing import Any

import pytest

from evigate.server.tools import TOOL_NAMES, openai_schemas
from tests.tools.conftest import Harness

BAD_ARGUMENTS = [
    ("query_logs", {"servce": "order-service"}, "unknown argument(s) servce"),
    ("query_logs", {"limit": "10"}, "limit must be an integer"),
    ("query_logs", {"limit": True}, "limit must be an integer"),
    ("query_logs", {"limit": 0}, "limit must be between 1 and 200"),
    ("query_logs", {"limit": 201}, "limit must be between 1 and 200"),
    ("query_logs", {"service": 42}, "service must be a string"),
    ("query_logs", {"keyword": "   "}, "keyword must not be empty"),
    ("query_logs", {"pattern": "timed out ("}, "pattern is not a valid regular expression"),
    ("query_logs", {"level": "LOUD"}, "level must be one of"),
    ("query_logs", {"since": "yesterday-ish"}, "since must be ISO-8601"),
    (
        "query_logs",
        {"since": "2026-07-08T23:00:00Z", "until": "2026-07-08T22:00:00Z"},
        "since is after until",
    ),
    ("query_metrics", {"state": "pending"}, "state must be one of firing, resolved"),
    ("query_metrics", {"keyword": "x"}, "unknown argument(s) keyword"),
    ("lookup_knowledge", {}, "missing required argument 'query'"),
    ("lookup_knowledge", {"query": ["HighCPUUsage"]}, "query must be a string"),
    ("drop_tables", {}, "unknown tool 'drop_tables'"),
]


@pytest.mark.parametrize(("tool", "arguments", "message"), BAD_ARGUMENTS)
async def test_bad_arguments_are_recorded_failed_calls(
    demo: Harness, tool: str, arguments: dict[str, Any], message: str
) -> None:
    result = await demo.call(tool, **arguments)
    assert result.status == "failed"
    assert result.error is not None and message in result.error
    assert result.retrieval_details == {
        "evidence_status": "failed",
        "match_level": "none",
        "evidence_refs": [],
    }
    row = demo.recorder.rows[-1]
    assert row["status"] == "failed" and row["error"] == result.error
    assert row["arguments"] == arguments
    assert row["retrieval_details"]["evidence_refs"] == []


async def test_level_aliases_and_null_arguments(demo: Harness) -> None:
    result = await demo.call("query_logs", service="payment-service", level="warning", keyword=None, limit=1)
    assert result.status == "success"
    assert result.raw_result is not None and result.raw_result["logs"][0]["level"] == "WARN"


def test_openai_schemas_describe_the_built_in_tools(demo: Harness) -> None:
    schemas = demo.toolbox.schemas()
    assert schemas == openai_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    assert set(TOOL_NAMES) == {
        "query_metrics",
        "query_logs",
        "lookup_knowledge",
        "query_promql",
        "summarize_logs",
        "list_services",
        "query_k8s",
        "query_k8s_events",
        "k8s_rollout_history",
    }
    for schema in schemas:
        params = schema["function"]["parameters"]
        assert schema["type"] == "function" and params["type"] == "object"
        assert params["additionalProperties"] is False
        # Listing tools take a limit; query_promql's bound is the server's series limit.
        assert ("limit" in params["properties"]) == (schema["function"]["name"] != "query_promql")
    logs = next(s for s in schemas if s["function"]["name"] == "query_logs")["function"]["parameters"]
    assert set(logs["properties"]) == {
        "service",
        "level",
        "keyword",
        "pattern",
        "query",
        "since",
        "until",
        "limit",
    }
    patterns = next(s for s in schemas if s["function"]["name"] == "summarize_logs")["function"]
    assert set(patterns["parameters"]["properties"]) == {
        "service",
        "level",
        "since",
        "until",
        "changed_since",
        "limit",
    }
    knowledge = next(s for s in schemas if s["function"]["name"] == "lookup_knowledge")["function"]
    assert knowledge["parameters"]["required"] == ["query"]
