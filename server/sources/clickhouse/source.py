"""query_logs and summarize_logs answered by a ClickHouse table of logs.

The same items as the file source: timestamp (UTC), level, service, message, then the row's other
fields (log and resource attributes flattened, trace and span ids), plus `row`, the row's key
(`<timestamp>#<hash>`) that `reread` finds it by, so a cited line can be read again. Each result
says the query's window and what the server did (`pushed_down`). The server filters and counts;
a summary mines the newest rows here with the file source's own miner, so the two summarize alike.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from datetime import UTC, datetime
from typing import Any

from evigate.server.queries.types import JSON, LogsQuery, Page, PatternsQuery, TimeWindow, ToolError
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.logs import patterns as log_patterns
from evigate.server.sources.logs import relevance as log_relevance
from evigate.server.sources.logs import severe as log_severe
from evigate.server.sources.logs.events import LEVELS, at_or_above, normalize_level
from evigate.server.sources.logs.items import pattern_item
from evigate.server.sources.logs.patterns import Pattern
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.services import Sighting, Sightings
from evigate.server.sources.times import display_time

from . import buckets, sql
from .clickhouse_config import ClickHouseConfig
from .client import ClickHouseClient, Row
from .relaxed import needs_relaxing, relaxed

# As the file source: summaries mine the newest MAX_MINED rows, relevance ranks the templates of the
# newest MAX_RANKED, and severe events under the level are kept up to SEVERE_PER_WORD per word.
MAX_MINED, MAX_RANKED, SEVERE_PER_WORD = 200_000, 50_000, 50
_OTEL_NUMBER_LEVELS = {n: LEVELS[(n - 1) // 4] for n in range(1, 25)}


@functools.lru_cache(maxsize=4096)
def parse_time(text: str) -> datetime:
    """ClickHouse's `toString(ts, 'UTC')`: `2026-07-08 20:00:39` with an optional fraction (a
    DateTime64's, up to nanoseconds: cut to microseconds). fromisoformat, not strptime: a summary
    parses up to MAX_MINED of them, and strptime was a quarter of its time; cached, as rows come in
    time order and a busy table's rows share their second."""
    head, dot, fraction = text.partition(".")
    if dot:
        text = f"{head}.{fraction[:6].ljust(6, '0')}"
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@functools.lru_cache(maxsize=1024)
def item_level(value: Any) -> str:
    """The level of a severity text or OTel number (a table holds a few spellings: cached)."""
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


def row_item(row: Row, moment: datetime | None = None) -> JSON:
    """The query_logs item of a row (`moment`: its time, when already parsed)."""
    moment = moment or parse_time(row["ts"])
    stamp = str(row["ts"])[:19]  # display_time's text, read off the server's UTC text
    item: JSON = {
        "timestamp": f"{stamp}.{moment.microsecond // 1000:03d}" if moment.microsecond else stamp,
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


def _at_or_above(level: str | None) -> tuple[str, ...] | None:
    """A query's level as the levels its SQL keeps: that one and every more severe one."""
    return at_or_above(normalize_level(level) or level.upper()) if level else None


def _facts(window: TimeWindow, where: sql.Where) -> JSON:
    return {
        "source": "clickhouse",
        "queried_window": {
            "since": display_time(window.since) if window.since else None,
            "until": display_time(window.until) if window.until else None,
        },
        "pushed_down": where.pushed_down(),
    }


class RowEvent:
    """A row as the miners and rankers read an event: time, level, message; the other fields (the
    query_logs item) only when asked, as relevance mode does: a summary mines up to MAX_MINED rows
    and reads none of them."""

    __slots__ = ("_item", "_row", "level", "message", "timestamp")

    def __init__(self, row: Row) -> None:
        self.timestamp = parse_time(row["ts"])
        self.level = item_level(row["level"])
        self.message = str(row["message"])
        self._row = row
        self._item: JSON | None = None

    @classmethod
    def of(cls, row: Row) -> RowEvent:
        return cls(row)

    @property
    def item(self) -> JSON:
        if self._item is None:
            self._item = row_item(self._row, self.timestamp)
        return self._item

    def chain_text(self) -> str:
        return str(self.item.get("exception", ""))

    def document(self, template: str) -> str:
        """What relevance mode ranks a template by (as the file source): template, example,
        exception, logger."""
        parts = [template, self.message, self.chain_text(), str(self.item.get("logger", ""))]
        return " ".join(part for part in parts if part)


class ClickHouseLogs:
    """A log source over one ClickHouse table; the client's pool is shared by its calls."""

    name = "clickhouse"
    watched = True  # a remote server: the service's health loop checks it

    def __init__(
        self,
        config: ClickHouseConfig,
        client: ClickHouseClient | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.config = config
        self.client = client or ClickHouseClient(config)
        self.embedder = embedder  # relevance mode fuses it with BM25, as the files' source does

    def _where(self, service: str | None, levels: tuple[str, ...] | None, window: TimeWindow) -> sql.Where:
        where = sql.Where(self.config.columns)
        where.window(window.since, window.until)
        where.service(service)
        where.levels(levels)
        return where

    async def query(self, q: LogsQuery) -> Page:
        if q.query:
            return await self._ranked(q, q.query)
        where = self._where(q.service, _at_or_above(q.level), q.window)
        where.keyword(q.keyword)
        if q.pattern and needs_relaxing(q.pattern):
            return await self._query_relaxed(q, where, q.pattern)
        where.pattern(q.pattern)
        table, columns = self.config.table_ref, self.config.columns
        rows, counted = await asyncio.gather(
            self.client.rows(sql.select_rows(columns, table, where, q.limit), where.params),
            self.client.rows(sql.select_count(table, where), where.params),
        )
        await self._held(q.service, int(counted[0]["total"]))
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
        """The server keeps the window, service and levels at or above q.level, counts them and
        returns the newest MAX_MINED; they are mined here as the file source mines its events
        (lowest wanted level first, newest first), with the rare severe events below the level that
        hold a severe word."""
        levels = at_or_above(q.level) if q.level in LEVELS else None
        where = self._where(q.service, levels, q.window)
        table, columns = self.config.table_ref, self.config.columns
        rows, spanned = await asyncio.gather(
            self.client.rows(sql.select_events(columns, table, where, MAX_MINED), where.params),
            self.client.rows(sql.select_span(columns, table, where), where.params),
        )
        total = int(spanned[0]["total"])
        await self._held(q.service, total)
        rank = {level: number for number, level in enumerate(LEVELS)}
        events = sorted(
            map(RowEvent.of, rows),
            key=lambda e: (rank.get(e.level, -1) if levels else 0, -e.timestamp.timestamp()),
        )
        below = tuple(level for level in LEVELS if levels and level not in levels)
        if below:
            events.extend(await self._severe_below(q, below))
        span = (q.window.since, q.window.until)
        summary = log_patterns.summary(events, limit=q.limit, span=span, at=q.changed_since)
        messages = [str(row["message"]) for row in rows] if len(rows) < total else []
        patterns, counts = await self._counted(q, where, summary.patterns, spanned[0], messages)
        extra = {**_facts(q.window, where), "events": total, "mined": len(events), **counts}
        return Page([pattern_item(p) for p in patterns], summary.total, extra)

    async def _counted(
        self, q: PatternsQuery, where: sql.Where, patterns: list[Pattern], span: Row, mined: list[str]
    ) -> tuple[list[Pattern], JSON]:
        """The window's counts per bucket, and (when only its newest rows were mined: `mined`
        their messages) each template's, computed by the server (buckets.py)."""
        if not int(span["total"]):
            return patterns, {}
        width, fine = buckets.widths(q.window, int(span["first"]), int(span["last"]))
        regexes = buckets.calibrated(patterns, mined) if mined else []
        asked = {n: key for key, n in enumerate(n for n, regex in enumerate(regexes) if regex)}
        params = {**where.params, **{f"t{key}": regexes[n] for n, key in asked.items()}}
        query = sql.select_buckets(
            self.config.columns, self.config.table_ref, where, fine if asked else width, len(asked)
        )
        rows = await self.client.rows(query, params)
        where.pushed.append("bucket and template counts" if asked else "bucket counts")
        return buckets.apply(rows, patterns, q.window, width, fine, asked=asked)

    async def _severe_below(self, q: PatternsQuery, levels: tuple[str, ...]) -> list[RowEvent]:
        where = self._where(q.service, levels, q.window)
        where.any_keyword(log_severe.KEYWORDS)
        limit = SEVERE_PER_WORD * len(log_severe.KEYWORDS)
        rows = await self.client.rows(
            sql.select_events(self.config.columns, self.config.table_ref, where, limit), where.params
        )
        return [e for e in map(RowEvent.of, rows) if log_severe.kind(e.message, e.level)]

    async def _ranked(self, q: LogsQuery, question: str) -> Page:
        """Relevance mode: the newest MAX_RANKED rows the exact filters keep, grouped into templates
        here and ranked against the question as the file source ranks them: BM25, fused with the
        service's embedder when one is configured."""
        where = self._where(q.service, _at_or_above(q.level), q.window)
        where.keyword(q.keyword)
        where.pattern(q.pattern)
        table, columns = self.config.table_ref, self.config.columns
        rows, counted = await asyncio.gather(
            self.client.rows(sql.select_rows(columns, table, where, MAX_RANKED), where.params),
            self.client.rows(sql.select_count(table, where), where.params),
        )
        await self._held(q.service, int(counted[0]["total"]))
        events = [RowEvent.of(row) for row in rows]
        grouping = log_patterns.group_messages([e.message for e in events])
        newest: dict[int, RowEvent] = {}
        counts: dict[int, int] = {}
        for event, group in zip(events, grouping.group_of, strict=True):
            newest.setdefault(group, event)  # the rows come newest first
            counts[group] = counts.get(group, 0) + 1
        groups = sorted(newest)
        documents = [newest[g].document(grouping.templates[g]) for g in groups]
        dense = await log_relevance.dense_scores(self.embedder, question, documents)
        ranked = log_relevance.rank(question, documents, dense)
        items = [
            {**newest[groups[at]].item, "lines_like_this": str(counts[groups[at]])}
            for at in ranked.order[: q.limit]
        ]
        extra = {
            **_facts(q.window, where),
            "ranked_templates": len(documents),
            "searched_events": int(counted[0]["total"]),
        }
        return Page(items, len(ranked.order), extra)

    async def _held(self, service: str | None, total: int) -> None:
        """Nothing found about a service the table holds no row of is a could-not-check, as for
        the file source: the answer names what the table does hold."""
        if total or service is None:
            return
        where = sql.Where(self.config.columns)
        where.service(service)
        found = await self.client.rows(sql.select_count(self.config.table_ref, where), where.params)
        if not int(found[0]["total"]):
            names = await self.services()
            shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
            table = self.config.table_ref
            raise ToolError(
                f"no logs of {service} are available: {table} holds no row of it (it holds {shown})"
            )

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

    async def query_logs(self, query: LogsQuery) -> Page:
        return await self.query(query)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return await self.summarize(query)

    async def sightings(self) -> Sightings:
        """The services the table holds (nothing when it cannot be read: the health entry says why)."""
        try:
            return Sightings(tuple(Sighting(name, "log") for name in await self.services()))
        except ToolError:
            return Sightings()

    async def health(self) -> SourceHealth:
        return await self.client.health()

    async def aclose(self) -> None:
        await self.client.aclose()
