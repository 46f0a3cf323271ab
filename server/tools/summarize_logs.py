"""summarize_logs: the log templates of a service / level / window, most frequent first (docs/design.md §6.4).

What a person does first when asked "what is wrong with X": group the events by the statement that
wrote them. Each pattern is cited as `$.patterns[i]`; its ref text holds the template, the count,
the first and last timestamps (UTC), the levels and one example event, on one line, so a claim such
as "`Connection is not available` appeared 412 times between 09:58 and 10:31" quotes it verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from evigate.rules.enums import ClaimType, ToolName
from evigate.server.queries.types import JSON, PatternsQuery, TimeWindow
from evigate.server.sources.logs.events import LEVELS
from evigate.server.sources.logs.patterns import details_text
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.args import ArgumentError
from evigate.server.tools.backend import ToolBackend
from evigate.server.tools.query_logs import clean_argument, skipped_note
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 10, 50


def pattern_text(item: Mapping[str, Any]) -> str:
    """template="..." count=412 first=2026-07-08 09:58:01 last=... levels=ERROR,WARN example="..."
    (the same text as server.sources.logs.patterns.pattern_ref_text)."""
    levels = ",".join(refs.text(level) for level in item.get("levels", ())) or "-"
    return (
        (
            f'template="{refs.text(item["template"])}" count={item["count"]} '
            f"first={item['first']} last={item['last']} levels={levels} "
            f'example="{refs.text(item["example"])}"'
        )
        + details_text(
            refs.text(item["severe"]) if item.get("severe") else None,
            [refs.text(slot) for slot in item.get("slots", ())],
            refs.text(item.get("per_bucket", "")),
            refs.text(item.get("change", "")),
            refs.text(item.get("cause", "")),
        )
        + (f" | service={refs.text(item['service'])}" if item.get("service") else "")
    )


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    now = backend.now()
    window = tool_args.window(args, now)
    at = (
        tool_args.parse_time(args["changed_since"], now, "changed_since") if "changed_since" in args else None
    )
    if at is not None:  # both sides bounded: rates are per hour of each side
        until = window.until or now
        since = window.since or at - max(until - at, timedelta(hours=1))  # as long before as after
        window = TimeWindow(since, until)
    if at is not None and window.since is not None and not window.since < at:
        raise ArgumentError("changed_since must be after since")
    query = PatternsQuery(
        service=args.get("service"),
        level=args.get("level"),
        window=window,
        limit=args.get("limit", DEFAULT_LIMIT),
        changed_since=at,
    )
    page = await backend.summarize_logs(query)
    # Each template names the service it was asked for, so an answer can say whose it is even when
    # the records' own service field calls it otherwise.
    items = [{**item, "service": query.service} if query.service else item for item in page.items]
    return Answer(items, page.total, window=query.window, notes=skipped_note(page), extra=page.extra)


TOOL = Tool(
    name=ToolName.SUMMARIZE_LOGS,
    description=(
        "The log templates (patterns) of the matching events, most frequent first: each with its "
        "count, first and last timestamps, levels and one example event. level is the lowest "
        "severity kept (WARN keeps WARN, ERROR and FATAL). Each also gives its variable values "
        "(first/last, min/max, distinct, top), its counts per time bucket, and rare severe templates "
        "(OOM, panic, exceptions, restarts, reloads) follow however rare. Start here for 'what is "
        "wrong with X'; with changed_since, for 'what changed'."
    ),
    properties={
        "service": {**tool_args.STRING, "description": "exact service name"},
        "level": {"type": "string", "enum": list(LEVELS), "description": "lowest severity kept"},
        **tool_args.WINDOW,
        "changed_since": {
            **tool_args.STRING,
            "description": (
                f"compare before and after this moment ({tool_args.TIME_DOC}): templates new since "
                "then and rate changes come first, each with both counts, rates and spans"
            ),
        },
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="patterns",
    item_text=pattern_text,
    no_evidence_message="未找到匹配的日志",
    query_keys=("service", "level", "changed_since"),
    # A template's count and time span are what was seen, not why: root causes cite the events.
    claim_types=frozenset({ClaimType.OBSERVATION, ClaimType.NEGATIVE_OBSERVATION, ClaimType.SYMPTOM}),
    clean=clean_argument,
)
