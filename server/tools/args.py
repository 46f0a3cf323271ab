"""Tool argument schemas (OpenAI function calling) and their validation.

Arguments come from an LLM or a rule-based executor: anything may arrive. Validation turns them into
typed queries or raises ArgumentError with a message the caller can act on; the call is then
recorded as failed with that message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from server.tools.backend import JSON, KnowledgeQuery, LogsQuery, MetricsQuery, TimeWindow
from server.tools.logstore import LEVEL_ALIASES

DEFAULT_LIMIT = {"query_metrics": 20, "query_logs": 20, "lookup_knowledge": 5}
MAX_LIMIT = {"query_metrics": 100, "query_logs": 200, "lookup_knowledge": 20}
MAX_TEXT = 500  # characters of any string argument; a regex longer than this is refused too
LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
_RELATIVE = re.compile(r"^-?(\d+)\s*([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

_TIME_DOC = 'ISO-8601 UTC time ("2026-07-08T23:00:00Z"), "now", or a duration before now ("30m", "2h", "1d")'
_STRING = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}


def _props(tool: str, extra: JSON) -> JSON:
    limit = {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LIMIT[tool],
        "description": f"maximum items returned (default {DEFAULT_LIMIT[tool]}); the total is reported",
    }
    return {**extra, "limit": limit}


_WINDOW = {
    "since": {**_STRING, "description": f"start of the time window: {_TIME_DOC}"},
    "until": {**_STRING, "description": f"end of the time window: {_TIME_DOC}"},
}

SCHEMAS: dict[str, JSON] = {
    "query_metrics": {
        "description": (
            "Firing and resolved alerts (service, alert name, state, current value, duration, labels). "
            "Filters are exact and case-insensitive; an alert matches a window when it was active in it."
        ),
        "properties": _props(
            "query_metrics",
            {
                "service": {**_STRING, "description": "exact service name, e.g. payment-service"},
                "alert_name": {**_STRING, "description": "exact alert name, e.g. HighCPUUsage"},
                "state": {"type": "string", "enum": ["firing", "resolved"]},
                **_WINDOW,
            },
        ),
        "required": [],
    },
    "query_logs": {
        "description": (
            "Log lines (timestamp, level, service, message, extra fields), newest first. keyword is a "
            "case-insensitive exact substring, pattern a Python regular expression; both search the "
            "message and the extra fields."
        ),
        "properties": _props(
            "query_logs",
            {
                "service": {**_STRING, "description": "exact service name"},
                "level": {"type": "string", "enum": list(LEVELS)},
                "keyword": {**_STRING, "description": "exact substring, e.g. HikariCP"},
                "pattern": {**_STRING, "description": "regular expression, e.g. timed out after \\d+ms"},
                **_WINDOW,
            },
        ),
        "required": [],
    },
    "lookup_knowledge": {
        "description": "Evidence blocks from runbooks, skill documents and the case library. L0 when a key "
        "term (alert name, error code, exception class, pool or skill name) matches exactly, L1 by lexical "
        "similarity (BM25), otherwise no evidence.",
        "properties": _props(
            "lookup_knowledge",
            {"query": {**_STRING, "description": "question or key terms, Chinese or English"}},
        ),
        "required": ["query"],
    },
}
TOOL_NAMES = tuple(SCHEMAS)


class ArgumentError(ValueError):
    """The arguments do not fit the tool's schema."""


def openai_schemas() -> list[JSON]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": spec["description"],
                "parameters": {
                    "type": "object",
                    "properties": spec["properties"],
                    "required": spec["required"],
                    "additionalProperties": False,
                },
            },
        }
        for name, spec in SCHEMAS.items()
    ]


def normalize(tool: str, arguments: Mapping[str, Any]) -> JSON:
    """Checks keys and types; returns the arguments with strings stripped (the dedup key)."""
    if tool not in SCHEMAS:
        raise ArgumentError(f"unknown tool {tool!r}; available: {', '.join(TOOL_NAMES)}")
    if not isinstance(arguments, Mapping):
        raise ArgumentError("arguments must be a JSON object")
    props: JSON = SCHEMAS[tool]["properties"]
    unknown = sorted(str(k) for k in arguments if k not in props)
    if unknown:
        raise ArgumentError(f"unknown argument(s) {', '.join(unknown)}; allowed: {', '.join(props)}")
    for key in SCHEMAS[tool]["required"]:
        if arguments.get(key) is None:
            raise ArgumentError(f"missing required argument {key!r}")
    out: JSON = {}
    for key, value in arguments.items():
        if value is None:
            continue
        spec = props[key]
        if spec["type"] == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ArgumentError(f"{key} must be an integer, got {type(value).__name__}")
            if not spec["minimum"] <= value <= spec["maximum"]:
                raise ArgumentError(f"{key} must be between {spec['minimum']} and {spec['maximum']}")
            out[key] = value
            continue
        if not isinstance(value, str):
            raise ArgumentError(f"{key} must be a string, got {type(value).__name__}")
        text = value.strip()
        if not text:
            raise ArgumentError(f"{key} must not be empty")
        if len(text) > MAX_TEXT:
            raise ArgumentError(f"{key} is longer than {MAX_TEXT} characters")
        if key == "level":
            text = LEVEL_ALIASES.get(text.upper(), text.upper())
        if key == "state":
            text = text.lower()
        if "enum" in spec and text not in spec["enum"]:
            raise ArgumentError(f"{key} must be one of {', '.join(spec['enum'])}, got {value!r}")
        if key == "pattern":
            try:
                re.compile(text)
            except re.error as exc:
                raise ArgumentError(f"pattern is not a valid regular expression: {exc}") from exc
        out[key] = text
    return out


def parse_time(value: str, now: datetime, key: str) -> datetime:
    """ISO-8601 (naive = UTC), "now", or a duration before now."""
    if value.lower() == "now":
        return now
    relative = _RELATIVE.match(value.strip().lower())
    if relative:
        return now - timedelta(seconds=int(relative.group(1)) * _UNIT_SECONDS[relative.group(2)])
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ArgumentError(f"{key} must be {_TIME_DOC}, got {value!r}") from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def window(args: Mapping[str, Any], now: datetime) -> TimeWindow:
    since = parse_time(args["since"], now, "since") if "since" in args else None
    until = parse_time(args["until"], now, "until") if "until" in args else None
    if since is not None and until is not None and since > until:
        raise ArgumentError("since is after until")
    return TimeWindow(since, until)


def metrics_query(args: Mapping[str, Any], now: datetime) -> MetricsQuery:
    return MetricsQuery(
        service=args.get("service"),
        alert_name=args.get("alert_name"),
        state=args.get("state"),
        window=window(args, now),
        limit=args.get("limit", DEFAULT_LIMIT["query_metrics"]),
    )


def logs_query(args: Mapping[str, Any], now: datetime) -> LogsQuery:
    return LogsQuery(
        service=args.get("service"),
        level=args.get("level"),
        keyword=args.get("keyword"),
        pattern=args.get("pattern"),
        window=window(args, now),
        limit=args.get("limit", DEFAULT_LIMIT["query_logs"]),
    )


def knowledge_query(args: Mapping[str, Any]) -> KnowledgeQuery:
    return KnowledgeQuery(query=args["query"], limit=args.get("limit", DEFAULT_LIMIT["lookup_knowledge"]))
