"""Alert history from Prometheus' `ALERTS` / `ALERTS_FOR_STATE` series over a window.

"Is X still firing? When did it resolve?" is answered from the series the rule manager writes: an
alert that fired and stopped inside the window is reported resolved, with when it stopped (the last
point of the range query that saw it plus one step — the first point where it was gone), never as
"not found". An alert shorter than the step is still caught: each point also looks back one step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from .matching import DEFAULT_SERVICE_MATCHES, ServiceMatch, promql_string, service_of
from .prom_types import RangeSpec
from .prometheus import Prometheus
from .series_text import fmt_duration, fmt_time


@dataclass(frozen=True)
class AlertInterval:
    state: str  # firing | pending
    start: datetime  # the first sample
    last_seen: datetime  # the last sample
    end: datetime | None  # when it was gone (see _intervals); None while still active at the window's end
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

    def span(self, seconds: float) -> str:
        """A duration; one seen at a single point only is shorter than a step, not zero."""
        return fmt_duration(seconds) if seconds > 0 else f"under {fmt_duration(self.window.step)}"

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
            span = self.span((until - i.start).total_seconds())
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


def _intervals(
    state: str, times: Sequence[float], live: set[float], window: RangeSpec, for_state: Mapping[float, float]
) -> list[AlertInterval]:
    """Runs of consecutive evaluation points; a run is open (still active) when it reaches the last
    point of the window and the series is live there — not merely a sample within the last step,
    which an alert resolved moments ago still has."""
    last_point = window.start + ((window.end - window.start) // window.step) * window.step
    runs: list[list[float]] = []
    for t in times:
        if runs and t - runs[-1][-1] <= window.step * 1.5:
            runs[-1].append(t)
        else:
            runs.append([t])
    out = []
    for run in runs:
        since = next((for_state[t] for t in run if t in for_state), None)
        # Live at its last point: it stopped before the next one. Seen there only by looking back
        # a step: it had already stopped by that point.
        stopped = run[-1] + window.step if run[-1] in live else run[-1]
        open_ = run[-1] >= last_point - window.step * 0.5 and run[-1] in live
        out.append(
            AlertInterval(
                state=state,
                start=datetime.fromtimestamp(run[0], UTC),
                last_seen=datetime.fromtimestamp(run[-1], UTC),
                end=None if open_ else datetime.fromtimestamp(stopped, UTC),
                active_since=datetime.fromtimestamp(since, UTC) if since is not None else None,
            )
        )
    return out


def _caught(metric: str, body: str, step: float) -> str:
    """The series at each point: by lookback (until its stale marker), or any sample in the last step
    — so an alert that fired and resolved between two points is not missed."""
    # max_over_time drops __name__ (last_over_time keeps it), which tells the two sides apart.
    # A PromQL duration is whole units: milliseconds cover any step the guard allows.
    return f"{metric}{{{body}}} or max_over_time({metric}{{{body}}}[{round(step * 1000)}ms])"


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
    step, _ = prom.plan_step(start, end, step_s)
    for sel in selectors:
        body = ", ".join(sel)
        result = await prom.query_range(_caught("ALERTS", body, step), start, end, step)
        if not result.series or result.range is None:
            continue
        states = await prom.query_range(_caught("ALERTS_FOR_STATE", body, step), start, end, step)
        # Both sides of the `or` come back (one keeps __name__, one does not): merge by identity.
        for_state: dict[tuple[tuple[str, str], ...], dict[float, float]] = {}
        for series in states.series:
            for_state.setdefault(_identity(series.labels), {}).update((p.t, p.v) for p in series.samples)
        times: dict[tuple[tuple[tuple[str, str], ...], str], set[float]] = {}
        live: dict[tuple[tuple[tuple[str, str], ...], str], set[float]] = {}
        for series in result.series:
            key = (_identity(series.labels), series.labels.get("alertstate", "firing"))
            times.setdefault(key, set()).update(p.t for p in series.samples)
            if series.name == "ALERTS":  # the lookback side: present until the stale marker
                live.setdefault(key, set()).update(p.t for p in series.samples)
        grouped: dict[tuple[tuple[str, str], ...], list[AlertInterval]] = {}
        for key, seen in times.items():
            identity, state = key
            found = _intervals(
                state, sorted(seen), live.get(key, set()), result.range, for_state.get(identity, {})
            )
            grouped.setdefault(identity, []).extend(found)
        out = []
        for identity, intervals in sorted(grouped.items()):
            labels = dict(identity)
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
