"""One pooled HTTP client per source, and the one error every source raises.

`SourceError` subclasses the tool layer's `ToolError`, so a source that is down, slow, answers an
HTTP error or rejects a query is recorded as a failed tool call, never as "no evidence". Its message
names the source, its URL and what happened; for a rejected query it carries the server's own
`errorType` and `error`, so an LLM retry can correct the expression.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import httpx

from evigate.server.queries.types import ToolError

from .sources_config import SourceSettings

ErrorKind = Literal[
    "unreachable", "timeout", "http_status", "bad_query", "bad_response", "rejected", "too_large"
]
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
Params = Sequence[tuple[str, str]]


class SourceError(ToolError):
    """A source could not answer; `kind` says how."""

    def __init__(
        self,
        source: str,
        url: str,
        kind: ErrorKind,
        detail: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
    ) -> None:
        self.source, self.url, self.kind, self.detail = source, url, kind, detail
        self.status, self.error_type = status, error_type
        super().__init__(self._message())

    def _message(self) -> str:
        where = f"{self.source} at {self.url}"
        if self.kind == "unreachable":
            return f"{where} is unreachable: {self.detail}"
        if self.kind == "timeout":
            return f"{where} timed out: {self.detail}"
        if self.kind == "bad_query":
            return f"{where} rejected the query (HTTP {self.status}, {self.error_type}): {self.detail}"
        if self.kind == "http_status":
            kind = f", {self.error_type}" if self.error_type else ""
            return f"{where} answered HTTP {self.status}{kind}: {self.detail}"
        if self.kind == "rejected":
            return f"{self.source} query refused before sending: {self.detail}"
        if self.kind == "too_large":
            return f"{where} answer too large: {self.detail}"
        return f"{where} gave an unusable answer: {self.detail}"

    def as_dict(self) -> dict[str, Any]:
        """The fields a failed invocation records (no secrets: URLs carry none)."""
        return {
            "source": self.source,
            "url": self.url,
            "kind": self.kind,
            "status": self.status,
            "error_type": self.error_type,
            "detail": self.detail,
        }


def _server_error(body: bytes) -> tuple[str | None, str]:
    """(errorType, message) from a Prometheus `{"errorType","error"}` or Alertmanager / plain body."""
    try:
        data = json.loads(body)
    except ValueError:
        return None, " ".join(body.decode("utf-8", "replace").split())[:500] or "(empty body)"
    if isinstance(data, dict):
        if "error" in data:
            return (str(data["errorType"]) if "errorType" in data else None), str(data["error"])
        if "message" in data:
            return None, str(data["message"])
    return None, json.dumps(data, ensure_ascii=False)[:500]


def _verify(settings: SourceSettings) -> ssl.SSLContext | bool:
    if settings.insecure_skip_verify:
        return False
    if settings.ca_bundle:
        return ssl.create_default_context(cafile=settings.ca_bundle)
    return True


class SourceClient:
    """Read-only JSON over one pooled `httpx.AsyncClient`; only paths `allowed(path)` accepts are sent."""

    def __init__(
        self,
        settings: SourceSettings,
        allowed: Callable[[str], bool],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.allowed = allowed
        self.max_bytes = max_bytes
        headers = {"Accept": "application/json", "User-Agent": "evigate-sources"}
        if settings.bearer_token:
            headers["Authorization"] = f"Bearer {settings.bearer_token}"
        auth = (
            httpx.BasicAuth(settings.basic_auth.username, settings.basic_auth.password)
            if (settings.basic_auth)
            else None
        )
        self._client = httpx.AsyncClient(
            base_url=settings.base_url,
            headers=headers,
            auth=auth,
            verify=_verify(settings),
            timeout=httpx.Timeout(settings.read_timeout_s, connect=settings.connect_timeout_s),
            limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
            transport=transport,
        )

    @property
    def name(self) -> str:
        return self.settings.name

    def error(self, kind: ErrorKind, detail: str, **extra: Any) -> SourceError:
        return SourceError(self.name, self.settings.base_url, kind, detail, **extra)

    async def get_json(self, path: str, params: Params = ()) -> Any:
        """GET `path` and decode its JSON; every failure becomes a SourceError."""
        status, body = await self.get(path, params)
        if status >= 400:
            error_type, message = _server_error(body)
            # Prometheus answers 400 bad_data for a malformed expression and 422 execution for one
            # that cannot be evaluated: both are the caller's query, so an LLM may correct it.
            kind: ErrorKind = "bad_query" if status in (400, 422) and error_type else "http_status"
            raise self.error(kind, message, status=status, error_type=error_type)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise self.error("bad_response", f"not JSON ({exc})", status=status) from exc

    async def get(self, path: str, params: Params = ()) -> tuple[int, bytes]:
        """(status, body) of a GET, the body cut off at `max_bytes`."""
        if not self.allowed(path):
            raise self.error("rejected", f"path {path!r} is not a read-only endpoint of this source")
        timeouts = f"connect {self.settings.connect_timeout_s:g}s, read {self.settings.read_timeout_s:g}s"
        try:
            async with self._client.stream("GET", path, params=list(params)) as response:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise self.error("too_large", f"more than {self.max_bytes} bytes; narrow the query")
                    chunks.append(chunk)
                return response.status_code, b"".join(chunks)
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.PoolTimeout):
                what = "free connection in the pool"
            else:
                what = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
                what += " answer"  # a write timeout is a read-side stall for a GET too
            raise self.error("timeout", f"no {what} within the timeout ({timeouts})") from exc
        except httpx.TransportError as exc:
            raise self.error("unreachable", f"{type(exc).__name__}: {exc or 'connection failed'}") from exc

    async def aclose(self) -> None:
        await self._client.aclose()


@dataclass(frozen=True)
class SourceHealth:
    """What `evigate sources` shows for one source."""

    name: str
    url: str
    reachable: bool
    ready: bool
    version: str | None = None
    started_at: datetime | None = None
    detail: str | None = None  # the failure, or extra state such as the cluster status

    def line(self) -> str:
        state = "ready" if self.ready else "reachable, not ready" if self.reachable else "UNREACHABLE"
        parts = [f"{self.name} {self.url}: {state}"]
        if self.reachable:
            parts.append(f"version {self.version or 'unknown'}")
        if self.started_at:
            parts.append(f"up since {self.started_at.strftime('%Y-%m-%d %H:%M:%S')} UTC")
        if self.detail:
            parts.append(self.detail)
        return "; ".join(parts)
