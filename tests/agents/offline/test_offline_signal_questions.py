"""A question whose words name a signal asks for its value only when it says so ("how much", "多少",
"what is"): then the signal answers and the alert its words only suggested is not asked. A question
about a state or a time ("is it slow?", "when did it run out of heap?", "延迟怎么样？") keeps the
checks it asked for beside the signal: the service's alerts and its log lines."""

from __future__ import annotations

import pytest

from evigate.rules.enums import ToolName
from evigate.server.agents.offline import signal_calls
from evigate.server.agents.offline.calls import plan_calls
from evigate.server.sources.services import CatalogView
from evigate.server.sources.signals import load_signal_catalog
from evigate.server.understanding.entities import extract

TOOLS = ("query_metrics", "query_logs", "summarize_logs", "query_promql", "lookup_knowledge")
VIEW = CatalogView(
    services={"fare-search": ("logs",), "order-router": ("logs",)},
    alert_names=("FareSearchLatencyHigh", "OrderRouterHeapHigh"),
)


def _calls(question: str) -> set[str]:
    entities = extract(question, VIEW)
    planned = plan_calls(entities, question, TOOLS)
    calls = signal_calls.metric_calls(question, entities, load_signal_catalog(), planned)
    return {c.tool_name for c in calls}


STATE_OR_TIME = (
    "Is fare-search slow right now?",
    "fare-search 的延迟怎么样？",
    "When did order-router run out of heap memory?",
)


@pytest.mark.parametrize("question", STATE_OR_TIME)
def test_a_state_or_time_question_keeps_the_alerts_beside_the_signal(question: str) -> None:
    assert {ToolName.QUERY_METRICS, ToolName.QUERY_PROMQL} <= _calls(question)


def test_a_time_question_about_a_symptom_keeps_its_log_lines() -> None:
    assert ToolName.QUERY_LOGS in _calls("When did order-router run out of heap memory?")


VALUE = ("What is the p99 latency of fare-search?", "fare-search 的延迟现在多少？")


@pytest.mark.parametrize("question", VALUE)
def test_a_value_question_is_answered_by_the_signal_alone(question: str) -> None:
    assert _calls(question) == {ToolName.QUERY_PROMQL}
