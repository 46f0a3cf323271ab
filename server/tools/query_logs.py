"""query_logs: log lines by service, level, keyword and pattern, newest first (docs/design.md §6.1)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.queries.types import JSON, LogsQuery, Page
from evigate.server.sources.logs.events import LEVELS, normalize_level
from evigate.server.sources.logs.relevance import level_word
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.args import ArgumentError
from evigate.server.tools.backend import ToolBackend
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 20, 200
_HEAD = ("timestamp", "level", "service", "message")


def log_text(item: Mapping[str, Any]) -> str:
    """2026-07-08 23:05:28 ERROR order-service HikariPool-1 - ... | logger=...; thread=..."""
    head = " ".join(refs.text(item[k]) for k in _HEAD)
    extras = refs.other_pairs(item, _HEAD)
    return f"{head} | {'; '.join(extras)}" if extras else head


_LEVEL_WORDS = frozenset({"TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "CRITICAL"})
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$")


def clean_argument(key: str, text: str) -> str:
    if key == "level":
        return normalize_level(text) or text.upper()
    if key == "keyword":  # "the gateway's": the possessive is the question's grammar, not the log's
        return _POSSESSIVE.sub("", text)
    if key == "pattern":
        try:
            re.compile(text)
        except re.error as exc:
            raise ArgumentError(f"pattern is not a valid regular expression: {exc}") from exc
    return text


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    level, keyword, question = args.get("level"), args.get("keyword"), args.get("query")
    named = normalize_level(keyword) if keyword is not None and keyword.upper() in _LEVEL_WORDS else None
    if named is not None and (level == named or (level is None and str(keyword).isupper())):
        level, keyword = named, None  # "ERROR" is a filter, not also a keyword
    if question is not None:
        named, question = level_word(question)
        level = level or named
        question = question or None
    query = LogsQuery(
        service=args.get("service"),
        level=level,
        keyword=keyword,
        pattern=args.get("pattern"),
        window=tool_args.window(args, backend.now()),
        limit=args.get("limit", DEFAULT_LIMIT),
        query=question,
    )
    page = await backend.query_logs(query)
    return Answer(page.items, page.total, window=query.window, notes=skipped_note(page), extra=page.extra)


def skipped_note(page: Page) -> dict[str, str]:
    """What a no-evidence ref says of unreadable lines: that part of the data could not be checked."""
    skipped = page.extra.get("skipped_lines")
    return {"skipped_lines": str(skipped)} if skipped else {}


TOOL = Tool(
    name=ToolName.QUERY_LOGS,
    description=(
        "Log lines (timestamp, level, service, message, extra fields), newest first. keyword is a "
        "case-insensitive exact substring, pattern a Python regular expression; both search the "
        "message, the extra fields and the stack trace. query ranks by relevance instead: the "
        "newest line of each kind of line that matches its words (other word orders, paraphrases, "
        "identifiers such as order_id or OutOfMemoryError), best first, with lines_like_this. "
        "Reads JSON lines, logfmt and plain-text logs (a line with no level word takes its HTTP status "
        "class: 5xx ERROR, 4xx WARN); skipped_lines counts lines that could not be read."
    ),
    properties={
        "service": {**tool_args.STRING, "description": "exact service name"},
        "level": {
            "type": "string",
            "enum": list(LEVELS),
            "description": "lowest severity kept: ERROR keeps ERROR and FATAL (CRITICAL, PANIC, EMERG)",
        },
        "keyword": {**tool_args.STRING, "description": "exact substring, e.g. HikariCP"},
        "pattern": {**tool_args.STRING, "description": "regular expression, e.g. timed out after \\d+ms"},
        "query": {
            **tool_args.STRING,
            "description": "words to rank lines by, e.g. database connection pool exhausted",
        },
        **tool_args.WINDOW,
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    answer=_answer,
    item_array="logs",
    item_text=log_text,
    no_evidence_message="未找到匹配的日志",
    query_keys=("service", "level", "keyword", "pattern", "query"),
    clean=clean_argument,
)
