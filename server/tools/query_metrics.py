"""query_metrics: firing and resolved alerts, filtered exactly (docs/design.md §6.1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.queries.types import JSON, MetricsQuery
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.backend import ToolBackend
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 20, 100


def alert_text(item: Mapping[str, Any]) -> str:
    """HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=..."""
    return ", ".join([refs.text(item.get("alert_name", "")), *refs.other_pairs(item, ("alert_name",))])


def _clean(key: str, text: str) -> str:
    return text.lower() if key == "state" else text


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    query = MetricsQuery(
        service=args.get("service"),
        alert_name=args.get("alert_name"),
        state=args.get("state"),
        window=tool_args.window(args, backend.now()),
        limit=args.get("limit", DEFAULT_LIMIT),
    )
    page = await backend.query_metrics(query)
    return Answer(page.items, page.total, window=query.window)


TOOL = Tool(
    name=ToolName.QUERY_METRICS,
    description=(
        "Firing and resolved alerts (service, alert name, state, current value, duration, labels). "
        "Filters are exact and case-insensitive; an alert matches a window when it was active in it."
    ),
    properties={
        "service": {**tool_args.STRING, "description": "exact service name, e.g. payment-service"},
        "alert_name": {**tool_args.STRING, "description": "exact alert name, e.g. HighCPUUsage"},
        "state": {"type": "string", "enum": ["firing", "resolved"]},
        **tool_args.WINDOW,
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="alerts",
    item_text=alert_text,
    no_evidence_message="未找到匹配的告警",
    query_keys=("service", "alert_name", "state"),
    clean=_clean,
)
