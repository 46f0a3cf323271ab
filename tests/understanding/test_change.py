"""Questions about a change ("since when?", "what changed?") read the history, not the last hour."""

from __future__ import annotations

import pytest

from evigate.server.agents.offline import signal_calls
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, plan_calls
from evigate.server.sources.signals import load_signal_catalog
from evigate.server.understanding.change import asks_change
from evigate.server.understanding.entities import extract

TOOLS = ("query_metrics", "query_logs", SUMMARIZE_LOGS, "query_promql", "lookup_knowledge")


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Since when has payments-db been refusing connections?", "since_when"),
        ("When did the timeouts of checkout start?", "since_when"),
        ("loyalty.points 的同步失败是从什么时候开始的？", "since_when"),
        ("What changed in OrderRouter this morning?", "what_changed"),
        ("ledger-sync 之前改过什么？", "what_changed"),
        ("What is wrong with checkout?", None),
        ("checkout 的 CPU 现在多少？", None),
    ],
)
def test_a_question_about_a_change_is_told_apart(question: str, kind: str | None) -> None:
    assert asks_change(question) == kind


def test_a_change_questions_logs_are_read_over_all_they_hold() -> None:
    question = "What changed in order-router?"
    entities = extract(question, ["order-router"])
    summary = next(c for c in plan_calls(entities, question, TOOLS) if c.tool_name == SUMMARIZE_LOGS)
    assert "since" not in summary.arguments
    broad = "What is wrong with order-router?"
    summary = next(
        c for c in plan_calls(extract(broad, ["order-router"]), broad, TOOLS) if c.tool_name == SUMMARIZE_LOGS
    )
    assert summary.arguments["since"] == "1h"


def test_a_metric_question_about_a_change_also_reads_the_logs_and_the_hours_of_the_signals() -> None:
    question = "fare-search 的延迟是从什么时候开始上升的？"
    entities = extract(question, ["fare-search"])
    calls = plan_calls(entities, question, TOOLS)
    (summary,) = [c for c in calls if c.tool_name == SUMMARIZE_LOGS]
    assert summary.arguments == {"service": "fare-search", "level": "WARN"}
    survey = "Since when has payments-db been failing?"
    planned = signal_calls.metric_calls(
        survey,
        extract(survey, ["payments-db"]),
        load_signal_catalog(),
        plan_calls(extract(survey, ["payments-db"]), survey, TOOLS),
    )
    windows = {c.arguments.get("since") for c in planned if "signal" in c.arguments}
    assert windows == {"12h"}


def test_a_metric_question_about_a_namespace_or_the_cluster_queries_the_store_not_a_guessed_service() -> None:
    catalog = load_signal_catalog()
    question = "Which pods use the most CPU in the app-7 namespace?"
    (call,) = signal_calls.scoped(question, extract(question, []), catalog)
    assert call.arguments == {"about": question, "since": "12h", "namespace": "app-7"}
    assert "namespace app-7" in signal_calls.negative_text(call, "en")
    wide = "Show me a graph of CPU per namespace"
    (call,) = signal_calls.scoped(wide, extract(wide, []), catalog)
    assert "namespace" not in call.arguments and "None" not in signal_calls.negative_text(call, "en")
    assert (
        signal_calls.scoped(
            "What is the CPU of checkout?", extract("What is the CPU of checkout?", []), catalog
        )
        == []
    )
