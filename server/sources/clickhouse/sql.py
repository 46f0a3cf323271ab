"""The SELECTs a log question becomes, with what each pushes down to the server.

The SQL text is built from configured column names (checked identifiers, quoted) and fixed
fragments only; every value a question carries (service, levels, keyword, pattern, window bounds) is
a column of the parameter table `p` (client.py) read as `(SELECT name FROM p)`.

- window: `Timestamp` between the bounds (the table's sort key prunes parts and granules);
- service: equality on the service column (exact name: the service catalog gives the canonical one);
- level: the severity text's spellings of the wanted levels (WARN also matches WARNING), or the
  OpenTelemetry severity number's ranges when the table has no severity text;
- keyword: `positionCaseInsensitiveUTF8` over the body and the log attributes as text;
- pattern: `match` (RE2) over the same;
- LIMIT and the total by `count()`;
- counts per time bucket (`intDiv(toUInt32(ts), width)`: 18.16 has no `toStartOfInterval` with
  an arbitrary width), overall and per template (`countIf(match(body, <the template's regex>))`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from evigate.server.sources.logs.events import LEVELS, normalize_level

from .clickhouse_config import Columns

# OpenTelemetry severity numbers: 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20 ERROR, 21-24 FATAL.
_OTEL_RANGE = {level: (4 * n + 1, 4 * n + 4) for n, level in enumerate(LEVELS)}
_SPELLINGS = (
    "TRACE", "FINEST", "FINER", "DEBUG", "DBG", "FINE", "D", "INFO", "INF", "INFORMATION", "NOTICE", "I",
    "CONFIG", "WARN", "WARNING", "WRN", "W", "ERROR", "ERR", "E", "SEVERE", "EROR", "FATAL", "CRITICAL",
    "CRIT", "CRT", "F", "ALERT", "EMERG", "EMERGENCY", "PANIC",
)  # fmt: skip


def quoted(column: str) -> str:
    return f"`{column}`"


def spellings(levels: tuple[str, ...]) -> list[str]:
    """Every upper-case spelling the log reader reads as one of `levels`."""
    return [text for text in _SPELLINGS if normalize_level(text) in levels]


@dataclass
class Where:
    """The WHERE clause of one question, its parameters, and what it pushed down (for the result)."""

    columns: Columns
    clauses: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    pushed: list[str] = field(default_factory=list)

    def add(self, pushed: str, clause: str, **params: Any) -> None:
        self.clauses.append(clause)
        self.params.update(params)
        self.pushed.append(pushed)

    def window(self, since: datetime | None, until: datetime | None) -> None:
        ts = quoted(self.columns.timestamp)
        if since is not None:
            self.add("window", f"{ts} >= toDateTime((SELECT since FROM p))", since=int(since.timestamp()))
        if until is not None:  # a DateTime compares by whole seconds: keep the second `until` falls in
            clause = f"{ts} < toDateTime((SELECT until FROM p))"
            self.add("window" if since is None else "", clause, until=int(until.timestamp()) + 1)

    def service(self, name: str | None) -> None:
        if name is not None:
            self.add("service", f"{quoted(self.columns.service)} = (SELECT service FROM p)", service=name)

    def levels(self, levels: tuple[str, ...] | None) -> None:
        if levels is None:
            return
        if self.columns.severity_text:
            text = f"upperUTF8(toString({quoted(self.columns.severity_text)}))"
            self.add("level", f"has((SELECT levels FROM p), {text})", levels=spellings(levels))
        elif self.columns.severity_number:
            number = quoted(self.columns.severity_number)
            ranges = [
                f"({number} BETWEEN {low} AND {high})" for low, high in (_OTEL_RANGE[lv] for lv in levels)
            ]
            self.add("level", f"({' OR '.join(ranges) or '0'})")

    def _searched(self) -> list[str]:
        searched = [quoted(self.columns.body)]
        if self.columns.log_attributes:
            searched.append(f"toString({quoted(self.columns.log_attributes)})")
        return searched

    def keyword(self, text: str | None) -> None:
        if text:
            found = [
                f"positionCaseInsensitiveUTF8({c}, (SELECT keyword FROM p)) > 0" for c in self._searched()
            ]
            self.add("keyword", f"({' OR '.join(found)})", keyword=text)

    def any_keyword(self, words: tuple[str, ...]) -> None:
        """Any of `words`, case-insensitive, in the body (the severe words under a summary's level)."""
        body = quoted(self.columns.body)
        found = f"arrayExists(w -> positionCaseInsensitiveUTF8({body}, w) > 0, (SELECT words FROM p))"
        self.add("severe words", found, words=list(words))

    def pattern(self, regex: str | None) -> None:
        if regex:
            found = [f"match({c}, (SELECT pattern FROM p))" for c in self._searched()]
            self.add("pattern", f"({' OR '.join(found)})", pattern=regex)

    def sql(self) -> str:
        return f"WHERE {' AND '.join(self.clauses)}" if self.clauses else ""

    def pushed_down(self) -> list[str]:
        return [name for name in dict.fromkeys(self.pushed) if name]


def row_hash(columns: Columns) -> str:
    """The row's identity beside its timestamp: a hash of what the row says."""
    parts = [columns.service, columns.body, columns.trace_id, columns.span_id]
    return f"cityHash64({', '.join(f'toString({quoted(c)})' for c in parts if c)})"


def level_expression(columns: Columns) -> str:
    if columns.severity_text:
        return f"toString({quoted(columns.severity_text)})"
    if columns.severity_number:
        return f"toString({quoted(columns.severity_number)})"
    return "''"


def select_rows(columns: Columns, table: str, where: Where, limit: int) -> str:
    """The newest `limit` rows (ties: by row hash, so the order is stable)."""
    extras = "".join(f", {quoted(column)} AS `{key}`" for key, column in columns.extras().items())
    service = quoted(columns.service)
    return (
        f"SELECT toString({quoted(columns.timestamp)}, 'UTC') AS ts, {level_expression(columns)} AS level, "
        f"toString({service}) AS service, {quoted(columns.body)} AS message{extras}, "
        f"{row_hash(columns)} AS row_hash FROM {table} {where.sql()} "
        f"ORDER BY {quoted(columns.timestamp)} DESC, row_hash DESC LIMIT {int(limit)}"
    )


def select_events(columns: Columns, table: str, where: Where, limit: int) -> str:
    """The newest `limit` rows as a summary mines them: time, level and body only (in the order of
    select_rows), so the server neither reads nor sends the attributes nobody looks at."""
    return (
        f"SELECT toString({quoted(columns.timestamp)}, 'UTC') AS ts, {level_expression(columns)} AS level, "
        f"{quoted(columns.body)} AS message FROM {table} {where.sql()} "
        f"ORDER BY {quoted(columns.timestamp)} DESC, {row_hash(columns)} DESC LIMIT {int(limit)}"
    )


def select_count(table: str, where: Where) -> str:
    return f"SELECT count() AS total FROM {table} {where.sql()}"


def select_services(columns: Columns, table: str) -> str:
    service = quoted(columns.service)
    return f"SELECT DISTINCT toString({service}) AS service FROM {table} ORDER BY service LIMIT 10000"


def select_span(columns: Columns, table: str, where: Where) -> str:
    """How many rows the question keeps, and the first and last second they fall in."""
    ts = quoted(columns.timestamp)
    return (
        f"SELECT count() AS total, toUInt32(min({ts})) AS first, toUInt32(max({ts})) AS last "
        f"FROM {table} {where.sql()}"
    )


def select_buckets(columns: Columns, table: str, where: Where, width: int, templates: int) -> str:
    """Per bucket of `width` seconds (its start, epoch seconds): the rows, and for each template
    `n` (its regex the parameter `t<n>`) how many rows it matches and the first one's second."""
    ts, body = quoted(columns.timestamp), quoted(columns.body)
    # Each match named once (m<n>) and read twice: two spellings of it would be two scalar
    # subqueries, and the server would run the regex twice per row (a third more time, measured).
    per = "".join(
        f", countIf(match({body}, (SELECT t{n} FROM p)) AS m{n}) AS t{n}, toUInt32(minIf({ts}, m{n})) AS f{n}"
        for n in range(templates)
    )
    bucket = f"intDiv(toUInt32({ts}), {int(width)}) * {int(width)}"
    return (
        f"SELECT {bucket} AS bucket, count() AS total{per} FROM {table} {where.sql()} "
        "GROUP BY bucket ORDER BY bucket"
    )
