"""ClickHouse's HTTP interface, read-only, with every value bound on the server.

ClickHouse 18.16 has no query parameters (`{name:Type}` came in 19.x). What every version has is
external data: the request carries a one-row table `p` (JSONEachRow) beside the SQL (both in the
multipart body; the URL holds only settings), and the SQL reads
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
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import httpx

from evigate.server.sources.http import ErrorKind, SourceError, SourceHealth

from .clickhouse_config import ClickHouseConfig

SOURCE = "clickhouse"
# JSONEachRow types of the parameter table's columns, by the Python type of the value.
_TYPES: dict[type, str] = {str: "String", int: "Int64", float: "Float64", bool: "UInt8"}
_EXCEPTION = re.compile(r"Code: \d+, e\.displayText\(\) = |Code: \d+\. DB::Exception")
Row = dict[str, Any]
_JSON = json.JSONDecoder()


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
        settings = {
            "readonly": "2",
            "max_execution_time": f"{config.timeout_s:g}",
            "output_format_json_quote_64bit_integers": "0",
        }
        self._settings = f"{self.url}/?{urlencode(settings)}"

    @property
    def url(self) -> str:
        return self.config.url.rstrip("/")

    def _error(self, kind: ErrorKind, detail: str, status: int | None = None) -> SourceError:
        return SourceError(SOURCE, self.url, kind, detail, status=status, error_type="clickhouse")

    def _request(self, sql: str, params: Mapping[str, Any] | None) -> httpx.Request:
        """The SQL in the body, never in the URL (a long URL costs more to build than the rest of
        the call): plain text without parameters, else a multipart form of the field `query` and
        the table `p`, as the official clients send external data. The URL holds the settings."""
        statement = f"{sql}\nFORMAT JSONEachRow".encode()
        if not params:
            headers = {"Content-Type": "text/plain; charset=utf-8"}
            return self._client.build_request("POST", self._settings, content=statement, headers=headers)
        structure = ", ".join(f"{name} {_column_type(value)}" for name, value in params.items())
        url = f"{self._settings}&{urlencode({'p_format': 'JSONEachRow', 'p_structure': structure})}"
        table = (json.dumps(dict(params), ensure_ascii=False) + "\n").encode()
        boundary = secrets.token_hex(16)
        while boundary.encode() in statement or boundary.encode() in table:
            boundary = secrets.token_hex(16)
        body = b"".join(
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="query"\r\n\r\n'.encode(),
                statement,
                f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="p"; filename="p"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n".encode(),
                table,
                f"\r\n--{boundary}--\r\n".encode(),
            )
        )
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        return self._client.build_request("POST", url, content=body, headers=headers)

    async def rows(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """The rows of one SELECT (`FORMAT JSONEachRow` is appended); `params` are readable in
        the SQL as `(SELECT name FROM p)`. The body is parsed as it arrives, line by line."""
        request = self._request(sql, params)
        try:
            response = await self._client.send(request, stream=True)
            try:
                if response.status_code >= 400:
                    text = (await response.aread()).decode("utf-8", "replace")
                    kind: ErrorKind = "bad_query" if _EXCEPTION.search(text) else "http_status"
                    raise self._error(kind, _clean_message(text) or "(empty body)", response.status_code)
                return await self._streamed(response)
            finally:
                await response.aclose()
        except httpx.TimeoutException as exc:
            raise self._error("timeout", f"no answer within {self.config.timeout_s:g}s") from exc
        except httpx.TransportError as exc:
            raise self._error("unreachable", f"{type(exc).__name__}: {exc or 'connection failed'}") from exc

    async def _streamed(self, response: httpx.Response) -> list[Row]:
        rows: list[Row] = []
        held = b""  # the last chunk's unfinished line
        async for chunk in response.aiter_bytes():
            whole, _, held = (held + chunk).rpartition(b"\n")
            if whole:
                self._decode(whole.decode(), response.status_code, rows)
        if held.strip():
            self._decode(held.decode(), response.status_code, rows)
        return rows

    def _decode(self, text: str, status: int, rows: list[Row]) -> None:
        decode = _JSON.raw_decode
        for line in text.split("\n"):
            if not line:
                continue
            try:
                row, end = decode(line)
                if end != len(line) and line[end:].strip():
                    raise ValueError(f"text after the row: {line[end:][:40]!r}")
            except ValueError as exc:
                # An error after the first block is written into the body of a 200 answer.
                if _EXCEPTION.search(line):
                    raise self._error("bad_query", _clean_message(line), status) from exc
                raise self._error("bad_response", f"not JSONEachRow: {line[:200]!r}", status) from exc
            rows.append(row)

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
