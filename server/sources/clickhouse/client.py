"""ClickHouse's HTTP interface, read-only, with every value bound on the server.

ClickHouse 18.16 has no query parameters (`{name:Type}` came in 19.x). What every version has is
external data: the request carries a one-row table `p` (JSONEachRow) beside the SQL, and the SQL reads
each value as a scalar subquery, `(SELECT keyword FROM p)`, which the server evaluates once, as a
constant, before it plans the query (so the primary key still prunes by time). The SQL text holds
only identifiers from configuration and fixed fragments; user input never enters it.

Each request runs with `readonly=2` (no writes, settings may still be set) and the server's
`max_execution_time` equal to the client's read timeout. A server that is down, slow or rejects
the SQL raises a SourceError (a ToolError) carrying ClickHouse's own message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from evigate.server.sources.http import ErrorKind, SourceError, SourceHealth

from .clickhouse_config import ClickHouseConfig

SOURCE = "clickhouse"
# JSONEachRow types of the parameter table's columns, by the Python type of the value.
_TYPES: dict[type, str] = {str: "String", int: "Int64", float: "Float64", bool: "UInt8"}
_EXCEPTION = re.compile(r"Code: \d+, e\.displayText\(\) = |Code: \d+\. DB::Exception")
Row = dict[str, Any]


def _column_type(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "Array(String)"
    return _TYPES[type(value)]


def _clean_message(text: str) -> str:
    """ClickHouse's message on one line, without the C++ noise 18.x appends."""
    text = " ".join(text.split())
    return text.replace(", e.what() = DB::Exception", "")[:800]


class ClickHouseClient:
    def __init__(self, config: ClickHouseConfig, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        headers = {"User-Agent": "evigate-sources"}
        if config.user:
            headers["X-ClickHouse-User"] = config.user
        if config.password:
            headers["X-ClickHouse-Key"] = config.password
        self._client = httpx.AsyncClient(
            base_url=config.url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 2.0)),
            limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
            transport=transport,
        )

    @property
    def url(self) -> str:
        return self.config.url.rstrip("/")

    def _error(self, kind: ErrorKind, detail: str, status: int | None = None) -> SourceError:
        return SourceError(SOURCE, self.url, kind, detail, status=status, error_type="clickhouse")

    async def rows(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """The rows of one SELECT (`FORMAT JSONEachRow` is appended); `params` are readable in
        the SQL as `(SELECT name FROM p)`."""
        query = {
            "query": f"{sql}\nFORMAT JSONEachRow",
            "readonly": "2",
            "max_execution_time": f"{self.config.timeout_s:g}",
            "output_format_json_quote_64bit_integers": "0",
        }
        files = None
        if params:
            structure = ", ".join(f"{name} {_column_type(value)}" for name, value in params.items())
            query |= {"p_format": "JSONEachRow", "p_structure": structure}
            files = {"p": ("p", json.dumps(dict(params), ensure_ascii=False) + "\n")}
        try:
            response = await self._client.post("/", params=query, files=files, data={} if files else None)
        except httpx.TimeoutException as exc:
            raise self._error("timeout", f"no answer within {self.config.timeout_s:g}s") from exc
        except httpx.TransportError as exc:
            raise self._error("unreachable", f"{type(exc).__name__}: {exc or 'connection failed'}") from exc
        text = response.text
        if response.status_code >= 400:
            kind: ErrorKind = "bad_query" if _EXCEPTION.search(text) else "http_status"
            raise self._error(kind, _clean_message(text) or "(empty body)", response.status_code)
        return self._decode(text, response.status_code)

    def _decode(self, text: str, status: int) -> list[Row]:
        rows = []
        for line in text.splitlines():
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                # An error after the first block is written into the body of a 200 answer.
                if _EXCEPTION.search(line):
                    raise self._error("bad_query", _clean_message(line), status) from exc
                raise self._error("bad_response", f"not JSONEachRow: {line[:200]!r}", status) from exc
        return rows

    async def health(self) -> SourceHealth:
        """Reachable (/ping answers), ready (the log table answers a count), the server's version."""
        try:
            ping = await self._client.get("/ping")
        except httpx.HTTPError as exc:
            detail = f"{type(exc).__name__}: {exc or 'connection failed'}"
            return SourceHealth(SOURCE, self.url, reachable=False, ready=False, detail=detail)
        if ping.status_code != 200:
            return SourceHealth(
                SOURCE, self.url, True, False, detail=f"/ping answered HTTP {ping.status_code}"
            )
        try:
            rows = await self.rows(
                f"SELECT version() AS version, count() AS rows FROM {self.config.table_ref}"
            )
        except SourceError as exc:
            return SourceHealth(SOURCE, self.url, True, False, detail=exc.detail)
        version = str(rows[0]["version"])
        detail = f"table {self.config.database}.{self.config.table}: {rows[0]['rows']} rows"
        return SourceHealth(SOURCE, self.url, True, True, version=version, detail=detail)

    async def aclose(self) -> None:
        await self._client.aclose()
