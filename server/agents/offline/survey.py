"""The survey of a broad question ("what's wrong with X", "X 怎么了"): the checks that follow from
the first results (the runbooks of the alerts found) and the checks that could not run.

A check whose tool is not registered is named as not run, never reported as having found nothing;
the survey states what each check returned and names no cause that no evidence states.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evigate.rules.enums import ToolName
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline.calls import QUERY_PROMQL, STEPS_QUERY, SUMMARIZE_LOGS, PlannedCall
from evigate.server.sources.retrieval import sections
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.entities import Entities

MAX_RUNBOOK_ALERTS = 3
# The signals a survey reads over the last hour when a Prometheus is configured (those the signal
# catalog defines), in this order.
KEY_SIGNALS = ("error_rate", "latency_p99", "cpu", "memory", "restarts")
SURVEY_WINDOW = "1h"


def found_alert_names(results: Sequence[tuple[PlannedCall, ToolCallResult]]) -> list[str]:
    """The alert names the survey's query_metrics calls returned, in result order."""
    names: list[str] = []
    for call, result in results:
        if call.tool_name != ToolName.QUERY_METRICS:
            continue
        for ref in c.refs_of(result):
            if ref.raw_path != "$.no_evidence":
                name = ref.text.split(",", 1)[0].strip()
                if name and name not in names:
                    names.append(name)
    return names


def signal_calls(
    entities: Entities, signals: Collection[str], since: str = SURVEY_WINDOW
) -> list[PlannedCall]:
    """The key signals of each service over the last hour, or `since` (`signals`: the catalog's
    names; empty when no Prometheus is configured)."""
    return [
        PlannedCall(
            QUERY_PROMQL,
            {"signal": name, "service": service, "since": since},
            service,
            window_minutes=int(since[:-1]) * 60 if since.endswith("h") else None,
            purpose="survey",
        )
        for service in entities.services[:1]
        for name in KEY_SIGNALS
        if name in signals
    ]


def follow_up_calls(
    results: Sequence[tuple[PlannedCall, ToolCallResult]], available: Collection[str], question: str = ""
) -> list[PlannedCall]:
    """The runbooks of the alerts found (an exact key lookup), the section the question's intent
    asks for (how to diagnose, what it is), else the procedure."""
    names = found_alert_names(results)[:MAX_RUNBOOK_ALERTS]
    if not names or ToolName.LOOKUP_KNOWLEDGE not in available:
        return []
    intent = sections.intent_of(question)
    query = " ".join([*names, STEPS_QUERY if intent in (None, "fix") else sections.INTENT_QUERY[intent]])
    return [PlannedCall(ToolName.LOOKUP_KNOWLEDGE, {"query": query}, purpose="survey")]


def survey_gaps(entities: Entities, available: Collection[str], prometheus: bool, language: str) -> list[str]:
    """The survey's checks that could not run, each named (never "nothing found")."""
    zh = language == "zh"
    out: list[str] = []
    if not entities.services:
        return out  # only names no source knows: nothing was surveyed
    services = ", ".join(entities.services)
    # No tool names or level words here: the answer check holds missing-information items to the
    # session's facts, and these name checks that did not run.
    if SUMMARIZE_LOGS not in available:
        # no severity word ("warning level") and no "no" (that reads as nothing found): the
        # sentence check passes this line as a could-not-check line by construction
        out.append(
            f"未能检查 {services} 的高频日志模式：日志模式汇总工具不可用（仅查询了错误日志行）。"
            if zh
            else f"The most frequent log patterns of {services} could not be checked: the log pattern "
            "tool is unavailable (only error lines were queried)."
        )
    if QUERY_PROMQL not in available or not prometheus:
        out.append(
            f"未能检查 {services} 最近一小时的关键指标：未配置指标数据源。"
            if zh
            else f"The key signals of {services} over the last hour could not be checked: "
            "no metrics source is configured."
        )
    return out
