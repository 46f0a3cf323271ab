"""query_logs and summarize_logs answered by a ClickHouse table of logs.

The same items as the file source: timestamp (UTC), level, service, message, then the row's other
fields (log and resource attributes flattened, trace and span ids), plus `row`, the row's key
(`<timestamp>#<hash>`) that `reread` finds it by, so a cited line can be read again. Each result
says the query's window and what the server did (`pushed_down`). A summary is grouped on the
server by message shape and level; only those groups, at most `max_rows`, are mined here into
templates, each group weighted by its count.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime
from typing import Any

from evigate.server.queries.types import JSON, LogsQuery, Page, PatternsQuery, TimeWindow, ToolError
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.logs import patterns as log_patterns
from evigate.server.sources.logs.events import LEVELS, normalize_level
from evigate.server.sources.logs.items import pattern_item
from evigate.server.sources.times import display_time

from . import sql
from .client import ClickHouseClient, Row
from .config import ClickHouseConfig
from .relaxed import needs_relaxing, relaxed

_OTEL_NUMBER_LEVELS = {n: LEVELS[(n - 1) // 4] for n in range(1, 25)}


def parse_time(text: str) -> datetime:
    """ClickHouse's `toString(ts, 'UTC')`: `2026-07-08 20:00:39` with an optional fraction."""
    head, _, fraction = text.partition(".")
    moment = datetime.strptime(head, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    return moment.replace(microsecond=int(fraction[:6].ljust(6, "0"))) if fraction else moment


def item_level(value: Any) -> str:
    text = str(value).strip()
    if text.isdigit():
        return _OTEL_NUMBER_LEVELS.get(int(text), "INFO")
    return normalize_level(text) or (text.upper() if text else "INFO")


def attributes(value: Any) -> dict[str, Any]:
    """A Map (a JSON object), JSON text, or key/value pairs (Nested, Array(Tuple)) as a dict."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except ValueError:
            return {"attributes": value}
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and all(isinstance(p, list | tuple) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}
    return {} if value in (None, [], "") else {"attributes": value}


def _searched_text(item: JSON) -> str:
    """What a pattern looks at, as in the file source: the message, then the other fields' values."""
    return "\n".join(
        str(value) for key, value in item.items() if key not in ("timestamp", "level", "service", "row")
    )


def row_item(row: Row) -> JSON:
    moment = parse_time(row["ts"])
    item: JSON = {
        "timestamp": display_time(moment),
        "level": item_level(row["level"]),
        "service": row["service"],
        "message": row["message"],
    }
    for key, value in attributes(row.get("attributes")).items():
        item.setdefault(key, value)
    for key in ("trace_id", "span_id"):
        if row.get(key):
            item.setdefault(key, row[key])
    for key, value in attributes(row.get("resource")).items():
        if key != "service.name":
            item.setdefault(key, value)
    item["row"] = f"{row['ts']}#{int(row['row_hash']):016x}"
    return item


def _facts(window: TimeWindow, where: sql.Where) -> JSON:
    return {
        "source": "clickhouse",
        "queried_window": {
            "since": display_time(window.since) if window.since else None,
            "until": display_time(window.until) if window.until else None,
        },
        "pushed_down": where.pushed_down(),
    }


class ClickHouseLogs:
    """A log source over one ClickHouse table; the client's pool is shared by its calls."""

    name = "clickhouse"

    def __init__(self, config: ClickHouseConfig, client: ClickHouseClient | None = None) -> None:
        self.config = config
        self.client = client or ClickHouseClient(config)

    def _where(self, service: str | None, levels: tuple[str, ...] | None, window: TimeWindow) -> sql.Where:
        where = sql.Where(self.config.columns)
        where.window(window.since, window.until)
        where.service(service)
        where.levels(levels)
        return where

    async def query(self, q: LogsQuery) -> Page:
        level = (normalize_level(q.level) or q.level.upper()) if q.level else None
        where = self._where(q.service, (level,) if level else None, q.window)
        where.keyword(q.keyword)
        if q.pattern and needs_relaxing(q.pattern):
            return await self._query_relaxed(q, where, q.pattern)
        where.pattern(q.pattern)
        table, columns = self.config.table_ref, self.config.columns
        rows, counted = await asyncio.gather(
            self.client.rows(sql.select_rows(columns, table, where, q.limit), where.params),
            self.client.rows(sql.select_count(table, where), where.params),
        )
        items = [row_item(row) for row in rows]
        return Page(
            items, int(counted[0]["total"]), {**_facts(q.window, where), "pushed_down_limit": q.limit}
        )

    async def _query_relaxed(self, q: LogsQuery, where: sql.Where, pattern: str) -> Page:
        """The server filters by the relaxed pattern, at most max_rows candidates, newest first;
        the pattern itself is matched here, over the message and the row's other fields."""
        where.pattern(relaxed(pattern))
        where.pushed[-1] = "pattern (relaxed: without lookaround / backreferences)"
        limit = self.config.max_rows
        rows = await self.client.rows(
            sql.select_rows(self.config.columns, self.config.table_ref, where, limit), where.params
        )
        regex = re.compile(pattern)
        items = [item for item in map(row_item, rows) if regex.search(_searched_text(item))]
        extra = {
            **_facts(q.window, where),
            "pattern_matched_here": {"candidates": len(rows), "complete": len(rows) < limit},
        }
        return Page(items[: q.limit], len(items), extra)

    async def summarize(self, q: PatternsQuery) -> Page:
        """Levels at or above q.level; groups ordered as the file source mines its events (lowest
        wanted level first, newest first), so Drain sees the messages in the same order."""
        levels = tuple(LEVELS[LEVELS.index(q.level) :]) if q.level in LEVELS else None
        where = self._where(q.service, levels, q.window)
        limit = self.config.max_rows
        rows = await self.client.rows(
            sql.select_shapes(self.config.columns, self.config.table_ref, where, limit), where.params
        )
        groups = [
            (row, item_level(row["level"]), parse_time(row["first"]), parse_time(row["last"])) for row in rows
        ]
        rank = {level: number for number, level in enumerate(LEVELS)}
        groups.sort(key=lambda g: (rank.get(g[1], -1) if levels else 0, -g[3].timestamp()))
        grouping = log_patterns.group_messages(
            [str(row["example"]) for row, *_ in groups], weights=[int(row["lines"]) for row, *_ in groups]
        )
        found = _patterns(groups, grouping)
        extra = {
            **_facts(q.window, where),
            "events": sum(int(row["lines"]) for row in rows),
            "mined": len(rows),
            "mined_complete": len(rows) < limit,
        }
        return Page([pattern_item(p) for p in found[: q.limit]], len(found), extra)

    async def services(self) -> list[str]:
        rows = await self.client.rows(sql.select_services(self.config.columns, self.config.table_ref))
        return [str(row["service"]) for row in rows if row["service"]]

    async def reread(self, row_key: str) -> JSON | None:
        """The row a `row` value names, as the item it was (None: no longer there)."""
        stamp, _, digest = row_key.rpartition("#")
        try:
            moment, row_hash = parse_time(stamp), int(digest, 16)
        except ValueError as exc:
            raise ToolError(f"not a ClickHouse row key: {row_key!r}") from exc
        columns = self.config.columns
        where = self._where(None, None, TimeWindow(moment.replace(microsecond=0), moment))
        # A UInt64 does not fit the parameter table's Int64: compared as decimal text.
        same_hash = f"toString({sql.row_hash(columns)}) = (SELECT row_hash FROM p)"
        where.add("row", same_hash, row_hash=str(row_hash))
        where.add(
            "row", f"toString({sql.quoted(columns.timestamp)}, 'UTC') = (SELECT stamp FROM p)", stamp=stamp
        )
        rows = await self.client.rows(sql.select_rows(columns, self.config.table_ref, where, 1), where.params)
        return row_item(rows[0]) if rows else None

    async def health(self) -> SourceHealth:
        return await self.client.health()

    async def aclose(self) -> None:
        await self.client.aclose()


def _patterns(
    groups: list[tuple[Row, str, datetime, datetime]], grouping: log_patterns.Grouping
) -> list[log_patterns.Pattern]:
    count: dict[int, int] = {}
    first: dict[int, datetime] = {}
    last: dict[int, datetime] = {}
    levels: dict[int, set[str]] = {}
    example: dict[int, str] = {}
    for (row, level, start, end), group in zip(groups, grouping.group_of, strict=True):
        count[group] = count.get(group, 0) + int(row["lines"])
        example.setdefault(group, str(row["example"]))
        levels.setdefault(group, set()).add(level)
        first[group] = min(first.get(group, start), start)
        last[group] = max(last.get(group, end), end)
    found = [
        log_patterns.Pattern(
            template, count[g], first[g], last[g], log_patterns.ordered_levels(levels[g]), example[g]
        )
        for g, template in enumerate(grouping.templates)
    ]
    never = datetime.max.replace(tzinfo=UTC)
    found.sort(key=lambda p: (-p.count, p.first or never, p.template))
    return found
