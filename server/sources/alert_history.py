"""Alert history from Prometheus' `ALERTS` / `ALERTS_FOR_STATE` series over a window.

"Is X still firing? When did it resolve?" is answered from the series the rule manager writes: an
alert that fired and stopped inside the window is reported resolved, with when it stopped (its last
sample plus one step — the first evaluation point where it was gone), never as "not found".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from .matching import DEFAULT_SERVICE_MATCHES, ServiceMatch, promql_string, service_of
from .prom_types import RangeSpec, Series
from .prometheus import Prometheus
from .series_text import fmt_duration, fmt_time


@dataclass(frozen=True)
class AlertInterval:
    state: str  # firing | pending
    start: datetime  # the first sample
    last_seen: datetime  # the last sample
    end: datetime | None  # last sample + step; None while it is still active at the window's end
    active_since: datetime | None = None  # from ALERTS_FOR_STATE (when the alert became pending)


@dataclass(frozen=True)
class AlertHistory:
    alertname: str
    service: str | None
    labels: Mapping[str, str]  # the alert's identity: every label but __name__ and alertstate
    intervals: tuple[AlertInterval, ...]  # in time order
    window: RangeSpec

    @property
    def state(self) -> str:
        """firing | pending (active at the window's end) or resolved."""
        last = self.intervals[-1]
        return last.state if last.end is None else "resolved"

    @property
    def resolved_at(self) -> datetime | None:
        last = self.intervals[-1]
        return last.end

    def text(self) -> str:
        """One line holding every fact of this history, for an evidence ref."""
        parts = [self.alertname]
        if self.service:
            parts.append(f"service={self.service}")
        parts.append(f"state={self.state}")
        if self.resolved_at is not None:
            parts.append(f"resolved_at={fmt_time(self.resolved_at.timestamp())}")
        for i in self.intervals:
            end = fmt_time(i.end.timestamp()) if i.end else "now"
            until = i.end or i.last_seen
            span = fmt_duration((until - i.start).total_seconds())
            since = f" active_since={fmt_time(i.active_since.timestamp())}" if i.active_since else ""
            parts.append(f"{i.state} {fmt_time(i.start.timestamp())} to {end} ({span}){since}")
        shown = {"alertname", "service"} if self.service == self.labels.get("service") else {"alertname"}
        parts += [f"{k}={v}" for k, v in sorted(self.labels.items()) if k not in shown]
        w = self.window
        parts.append(f"window={fmt_time(w.start)} to {fmt_time(w.end)}")
        parts.append(f"step={fmt_duration(w.step)}")
        return ", ".join(parts)


def _identity(labels: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in labels.items() if k not in ("__name__", "alertstate")))


def _intervals(series: Series, window: RangeSpec, for_state: Mapping[float, float]) -> list[AlertInterval]:
    """Runs of consecutive evaluation points; a run reaching the last point of the window is open."""
    last_point = window.start + ((window.end - window.start) // window.step) * window.step
    state = series.labels.get("alertstate", "firing")
    runs: list[list[float]] = []
    for s in series.samples:
        if runs and s.t - runs[-1][-1] <= window.step * 1.5:
            runs[-1].append(s.t)
        else:
            runs.append([s.t])
    out = []
    for run in runs:
        since = next((for_state[t] for t in run if t in for_state), None)
        open_ = run[-1] >= last_point - window.step * 0.5
        out.append(
            AlertInterval(
                state=state,
                start=datetime.fromtimestamp(run[0], UTC),
                last_seen=datetime.fromtimestamp(run[-1], UTC),
                end=None if open_ else datetime.fromtimestamp(run[-1] + window.step, UTC),
                active_since=datetime.fromtimestamp(since, UTC) if since is not None else None,
            )
        )
    return out


async def alert_history(
    prom: Prometheus,
    *,
    alertname: str | None,
    service: str | None,
    start: datetime,
    end: datetime,
    step_s: float | None = None,
    matches: Sequence[ServiceMatch] = DEFAULT_SERVICE_MATCHES,
) -> list[AlertHistory]:
    """Every alert (by label set) matching the name and service that was pending or firing in the
    window; empty only when none was. The first service matcher that finds series wins."""
    name = [f"alertname={promql_string(alertname)}"] if alertname else []
    selectors = [[*name, m.selector(service)] for m in matches] if service else [name]
    for sel in selectors:
        body = ", ".join(sel)
        result = await prom.query_range(f"ALERTS{{{body}}}", start, end, step_s)
        if not result.series or result.range is None:
            continue
        step = result.range.step
        states = await prom.query_range(f"ALERTS_FOR_STATE{{{body}}}", start, end, step)
        for_state = {_identity(s.labels): {p.t: p.v for p in s.samples} for s in states.series}
        grouped: dict[tuple[tuple[str, str], ...], list[AlertInterval]] = {}
        for s in result.series:
            key = _identity(s.labels)
            grouped.setdefault(key, []).extend(_intervals(s, result.range, for_state.get(key, {})))
        out = []
        for key, intervals in sorted(grouped.items()):
            labels = dict(key)
            out.append(
                AlertHistory(
                    alertname=labels.get("alertname", alertname or ""),
                    service=service_of(labels, matches) or service,
                    labels=labels,
                    intervals=tuple(sorted(intervals, key=lambda i: (i.start, i.state))),
                    window=result.range,
                )
            )
        return out
    return []
