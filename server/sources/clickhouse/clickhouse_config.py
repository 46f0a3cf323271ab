"""Where the logs sit in ClickHouse and what each column means: one typed object, no I/O.

    [logs.clickhouse]
    url = "http://127.0.0.1:8123"
    database = "default"
    table = "otel_logs"
    user = "default"                  # optional; password too
    timeout_s = 10
    [logs.clickhouse.columns]         # only the names that differ from the OTel exporter's
    timestamp = "Timestamp"
    body = "Body"

The default names are the OpenTelemetry Collector exporter's `otel_logs`. A column set to "" is
absent (no severity number, no trace id): the queries leave it out. Names are identifiers checked
here and quoted in the SQL; values never enter the SQL text (see client.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from evigate.rules.errors import EvigateError

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYS = frozenset({"url", "database", "table", "user", "password", "timeout_s", "columns", "max_rows"})


class ClickHouseConfigError(EvigateError, ValueError):
    """The ClickHouse section cannot be used; the message names the key (raised at start-up)."""


@dataclass(frozen=True)
class Columns:
    """The log table's column names by role; "" means the table has no such column."""

    timestamp: str = "Timestamp"
    severity_text: str = "SeverityText"
    severity_number: str = "SeverityNumber"
    service: str = "ServiceName"
    body: str = "Body"
    trace_id: str = "TraceId"
    span_id: str = "SpanId"
    resource_attributes: str = "ResourceAttributes"
    log_attributes: str = "LogAttributes"

    def __post_init__(self) -> None:
        for role in ("timestamp", "body"):
            if not getattr(self, role):
                raise ClickHouseConfigError(f"clickhouse.columns.{role}: required")
        for item in fields(self):
            name = getattr(self, item.name)
            if name and not _IDENTIFIER.match(name):
                raise ClickHouseConfigError(f"clickhouse.columns.{item.name}: not a column name: {name!r}")

    def extras(self) -> dict[str, str]:
        """The columns returned beside timestamp, level, service and message, by item key."""
        named = {
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "resource": self.resource_attributes,
            "attributes": self.log_attributes,
        }
        return {key: column for key, column in named.items() if column}


@dataclass(frozen=True)
class ClickHouseConfig:
    url: str = "http://127.0.0.1:8123"
    database: str = "default"
    table: str = "otel_logs"
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout_s: float = 10.0  # the HTTP read timeout and the server's max_execution_time
    columns: Columns = field(default_factory=Columns)
    # The most candidate rows a pattern RE2 cannot run is matched against here.
    max_rows: int = 20_000

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ClickHouseConfigError(
                f"clickhouse.url: must start with http:// or https://, got {self.url!r}"
            )
        for key in ("database", "table"):
            if not _IDENTIFIER.match(getattr(self, key)):
                raise ClickHouseConfigError(f"clickhouse.{key}: not an identifier: {getattr(self, key)!r}")
        if self.timeout_s <= 0 or self.max_rows <= 0:
            raise ClickHouseConfigError("clickhouse.timeout_s and max_rows must be positive")

    @property
    def table_ref(self) -> str:
        return f"`{self.database}`.`{self.table}`"


# Keys of the sources file's clickhouse section that SourceSettings reads (url, timeouts, auth).
_CONNECTION = frozenset(
    {"url", "timeout_s", "connect_timeout_s", "basic_auth", "ca_bundle", "insecure_skip_verify"}
)


def from_sources(
    url: str, timeout_s: float = 10.0, auth: Any = None, section: Mapping[str, Any] | None = None
) -> ClickHouseConfig:
    """The `clickhouse:` section of the sources file: the connection as every source's (url,
    timeout_s, basic_auth), and where the logs sit (database, table, columns, max_rows)."""
    section = dict(section or {})
    unknown = sorted(set(section) - _CONNECTION - _KEYS)
    if unknown:
        raise ClickHouseConfigError(f"clickhouse: unknown key(s) {', '.join(unknown)}")
    given = {k: v for k, v in section.items() if k in _KEYS and k not in ("url", "timeout_s")}
    if auth is not None:
        given |= {"user": auth.username, "password": auth.password}
    return clickhouse_config({**given, "url": url, "timeout_s": timeout_s})


def clickhouse_config(section: Mapping[str, Any]) -> ClickHouseConfig:
    """The `[logs.clickhouse]` table → ClickHouseConfig; unknown keys are errors, never ignored."""
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise ClickHouseConfigError(f"clickhouse: unknown key(s) {', '.join(unknown)}")
    config = ClickHouseConfig()
    given = {k: v for k, v in section.items() if k != "columns"}
    try:
        config = replace(config, **given)
    except TypeError as exc:
        raise ClickHouseConfigError(f"clickhouse: {exc}") from exc
    columns = section.get("columns", {})
    if not isinstance(columns, Mapping):
        raise ClickHouseConfigError("clickhouse.columns: expected a table of role = column name")
    roles = {item.name for item in fields(Columns)}
    if bad := sorted(set(columns) - roles):
        raise ClickHouseConfigError(f"clickhouse.columns: unknown role(s) {', '.join(bad)}")
    if not all(isinstance(v, str) for v in columns.values()):
        raise ClickHouseConfigError('clickhouse.columns: each value is a column name (or "")')
    return replace(config, columns=Columns(**columns))
