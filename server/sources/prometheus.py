"""Prometheus HTTP API v1 (and compatible stores such as VictoriaMetrics): typed, read-only, bounded.

The guard keeps a free PromQL call cheap and its answer small: only read-only endpoints are ever
sent; a range wider than `max_window_s` is refused (narrowing it silently would change the answer);
a step that would give more than `max_points` per series is raised, and more than `max_series`
series are cut — both reported in the result's `notes` and `total_series`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx

from .http import Params, SourceClient, SourceError, SourceHealth
from .prom_types import (
    BadAnswerError,
    MetricMetadata,
    PromAlert,
    QueryResult,
    RangeSpec,
    RuleGroup,
    Sample,
    parse_alert,
    parse_metadata,
    parse_rule_groups,
    parse_series,
    parse_time,
)
from .sources_config import QueryLimits, SourceSettings

_READ_ONLY = re.compile(
    r"/api/v1/(query|query_range|alerts|rules|series|labels|metadata|status/buildinfo|status/runtimeinfo"
    r"|label/[A-Za-z_][A-Za-z0-9_]*/values)|/-/ready|/health|/metrics"
)
# VictoriaMetrics tells its version in its own metrics, not in /api/v1/status/buildinfo:
# vm_app_version{version="victoria-metrics-20230313-…-tags-v1.89.1-0-g…", short_version="v1.89.1"} 1
_VM_APP_VERSION = re.compile(rb"^vm_app_version\{([^}]*)\}", re.MULTILINE)
_LABEL_PAIR = re.compile(r'(\w+)="([^"]*)"')
_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def read_only(path: str) -> bool:
    """Admin and write endpoints (`/api/v1/admin/...`, `/-/quit`, remote write) are never sent."""
    return _READ_ONLY.fullmatch(path) is not None


@dataclass(frozen=True)
class Listing:
    """A bounded list answer (series label sets, label values): at most the bound, and how many in all."""

    items: tuple[Any, ...]
    total: int


def _ts(moment: datetime | float) -> str:
    """Seconds with millisecond precision, never in exponent form (1e+06 would lose digits)."""
    return f"{moment.timestamp() if isinstance(moment, datetime) else moment:.3f}"


def _window(params: list[tuple[str, str]], start: datetime | None, end: datetime | None) -> None:
    if start is not None:
        params.append(("start", _ts(start)))
    if end is not None:
        params.append(("end", _ts(end)))


class Prometheus:
    """One Prometheus-compatible server; one pooled client for its lifetime (`aclose` when done)."""

    def __init__(
        self,
        settings: SourceSettings,
        limits: QueryLimits | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.limits = limits or QueryLimits()
        self.http = SourceClient(settings, read_only, transport=transport)

    @property
    def name(self) -> str:
        return self.http.name

    async def aclose(self) -> None:
        await self.http.aclose()

    async def _data(self, path: str, params: Params = ()) -> tuple[Any, tuple[str, ...]]:
        body = await self.http.get_json(path, params)
        if not isinstance(body, Mapping) or body.get("status") != "success" or "data" not in body:
            error = body.get("error") if isinstance(body, Mapping) else None
            raise self.http.error("bad_response", str(error or f"no success envelope: {str(body)[:200]}"))
        warnings = tuple(str(w) for w in body.get("warnings") or ())
        return body["data"], warnings

    def _check_expr(self, expr: str) -> str:
        expr = expr.strip()
        if not expr:
            raise self.http.error("rejected", "empty PromQL expression")
        if len(expr) > self.limits.max_query_chars:
            raise self.http.error(
                "rejected", f"expression longer than {self.limits.max_query_chars} characters"
            )
        return expr

    async def query(self, expr: str, at: datetime | None = None) -> QueryResult:
        expr = self._check_expr(expr)
        params = [("query", expr)]
        if at is not None:
            params.append(("time", _ts(at)))
        data, warnings = await self._data("/api/v1/query", params)
        return self._result(expr, data, warnings, time=at.timestamp() if at else None)

    def plan_step(self, start: datetime, end: datetime, step_s: float | None) -> tuple[float, list[str]]:
        """The step to send and what the guard changed; refuses a window past the bound."""
        window = (end - start).total_seconds()
        if window < 0:
            raise self.http.error("rejected", "range end is before its start")
        if window > self.limits.max_window_s:
            raise self.http.error(
                "rejected",
                f"range of {window:g}s exceeds the maximum {self.limits.max_window_s:g}s; narrow it",
            )
        fitting = max(self.limits.min_step_s, math.ceil(window / max(1, self.limits.max_points - 1)))
        if step_s is None:
            # No step asked: about 250 points, enough for first / last / min / max / avg.
            return max(fitting, math.ceil(window / 250)), []
        if step_s < fitting:
            return fitting, [
                f"step raised from {step_s:g}s to {fitting:g}s (at most {self.limits.max_points} points)"
            ]
        return step_s, []

    async def query_range(
        self, expr: str, start: datetime, end: datetime, step_s: float | None = None
    ) -> QueryResult:
        expr = self._check_expr(expr)
        step, notes = self.plan_step(start, end, step_s)
        params = [("query", expr), ("start", _ts(start)), ("end", _ts(end)), ("step", _ts(step))]
        data, warnings = await self._data("/api/v1/query_range", params)
        spec = RangeSpec(start.timestamp(), end.timestamp(), step)
        return self._result(expr, data, warnings, spec=spec, notes=notes)

    def _result(
        self,
        expr: str,
        data: Any,
        warnings: tuple[str, ...],
        *,
        time: float | None = None,
        spec: RangeSpec | None = None,
        notes: Sequence[str] = (),
    ) -> QueryResult:
        try:
            kind = data["resultType"]
            raw = data["result"]
            if kind == "scalar":
                return QueryResult(
                    expr,
                    "scalar",
                    (),
                    0,
                    scalar=Sample(float(raw[0]), float(raw[1])),
                    warnings=warnings,
                    time=time,
                )
            if kind == "string":
                return QueryResult(
                    expr, "string", (), 0, string=(float(raw[0]), str(raw[1])), warnings=warnings, time=time
                )
            if kind not in ("vector", "matrix"):
                raise BadAnswerError(f"unknown resultType {kind!r}")
            series = sorted(parse_series(kind, raw), key=lambda s: s.key())
        except (BadAnswerError, KeyError, TypeError, IndexError, ValueError) as exc:
            raise self.http.error("bad_response", f"unexpected query answer: {exc}") from exc
        notes = list(notes)
        bound = self.limits.max_series
        if len(series) > bound:
            notes.append(f"{len(series)} series, cut to the first {bound} by label order")
        return QueryResult(
            expr,
            kind,
            tuple(series[:bound]),
            len(series),
            warnings=warnings,
            time=time,
            range=spec,
            notes=tuple(notes),
        )

    async def alerts(self) -> list[PromAlert]:
        data, _ = await self._data("/api/v1/alerts")
        try:
            return [parse_alert(a) for a in data.get("alerts") or ()]
        except (BadAnswerError, AttributeError) as exc:
            raise self.http.error("bad_response", f"unexpected alerts answer: {exc}") from exc

    async def rules(self, rule_type: str | None = None) -> list[RuleGroup]:
        params = (
            [("type", {"alerting": "alert", "recording": "record"}.get(rule_type, rule_type))]
            if (rule_type)
            else []
        )
        data, _ = await self._data("/api/v1/rules", params)
        try:
            return parse_rule_groups(data)
        except (BadAnswerError, AttributeError, TypeError, ValueError) as exc:
            raise self.http.error("bad_response", f"unexpected rules answer: {exc}") from exc

    async def series(
        self,
        matchers: Sequence[str],
        start: datetime | None = None,
        end: datetime | None = None,
        bound: int | None = None,
    ) -> Listing:
        """Label sets of the series matching any selector; at most `bound` (default `max_series`)."""
        if not matchers:
            raise self.http.error("rejected", "series needs at least one selector")
        params = [("match[]", m) for m in matchers]
        _window(params, start, end)
        data, _ = await self._data("/api/v1/series", params)
        if not isinstance(data, list):
            raise self.http.error("bad_response", "series answer is not a list")
        items = sorted(
            (dict(sorted((str(k), str(v)) for k, v in d.items())) for d in data),
            key=lambda d: list(d.items()),
        )
        return Listing(tuple(items[: bound or self.limits.max_series]), len(items))

    async def labels(
        self, matchers: Sequence[str] = (), start: datetime | None = None, end: datetime | None = None
    ) -> list[str]:
        params = [("match[]", m) for m in matchers]
        _window(params, start, end)
        data, _ = await self._data("/api/v1/labels", params)
        return sorted(str(v) for v in data or ())

    async def label_values(
        self,
        name: str,
        matchers: Sequence[str] = (),
        start: datetime | None = None,
        end: datetime | None = None,
    ) -> list[str]:
        if not _LABEL_NAME.fullmatch(name):
            raise self.http.error("rejected", f"not a label name: {name!r}")
        params = [("match[]", m) for m in matchers]
        _window(params, start, end)
        data, _ = await self._data(f"/api/v1/label/{name}/values", params)
        return sorted(str(v) for v in data or ())

    async def metadata(self, metric: str | None = None) -> list[MetricMetadata]:
        data, _ = await self._data("/api/v1/metadata", [("metric", metric)] if metric else [])
        try:
            return parse_metadata(data)
        except (BadAnswerError, AttributeError) as exc:
            raise self.http.error("bad_response", f"unexpected metadata answer: {exc}") from exc

    async def health(self) -> SourceHealth:
        """Reachable and ready? Version and start time where the server tells them."""
        base = self.http.settings.base_url
        try:
            status, _ = await self.http.get("/-/ready")
            victoria = status == 404
            if victoria:  # VictoriaMetrics answers readiness on /health
                status, _ = await self.http.get("/health")
        except SourceError as exc:
            return SourceHealth(self.name, base, reachable=False, ready=False, detail=str(exc))
        version = await (self._victoria_version() if victoria else self._build_version())
        started = None
        try:
            runtime, _ = await self._data("/api/v1/status/runtimeinfo")
            started = parse_time(runtime.get("startTime")) if isinstance(runtime, Mapping) else None
        except (SourceError, BadAnswerError):
            pass  # optional endpoints: not every compatible store serves them
        detail = None if status == 200 else f"readiness answered HTTP {status}"
        return SourceHealth(self.name, base, True, status == 200, version, started, detail)

    async def _build_version(self) -> str | None:
        """Prometheus' version from its build information; None when it names none."""
        try:
            build, _ = await self._data("/api/v1/status/buildinfo")
        except (SourceError, BadAnswerError):
            return None
        version = build.get("version") if isinstance(build, Mapping) else None
        return str(version) if version else None

    async def _victoria_version(self) -> str | None:
        """VictoriaMetrics' version from its vm_app_version metric (the short one when it has
        one); None when the build carries none (distribution builds leave both labels empty)."""
        try:
            status, body = await self.http.get("/metrics")
        except SourceError:
            return None
        found = _VM_APP_VERSION.search(body) if status == 200 else None
        if found is None:
            return None
        labels = dict(_LABEL_PAIR.findall(found.group(1).decode(errors="replace")))
        return labels.get("short_version") or labels.get("version") or None
