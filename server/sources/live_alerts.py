"""`query_metrics` on live sources: alerts active now from Alertmanager, plus alerts that fired and
resolved inside the window from Prometheus' ALERTS history — so "is X still firing?" about an alert
that stopped answers "resolved at ...", never "not found".

Items have the fixture backend's shape (alert_name, service, state, current, duration, starts_at,
...), so refs and texts come out of the tool layer unchanged. `state` is firing, silenced or
inhibited for an active alert (silenced and inhibited alerts still fire; only their notifications are
held back, so the `firing` filter keeps them and the item says which) and resolved for history.
Either source failing fails the call: a partial answer could wrongly read as "nothing found".
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from evigate.server.queries.types import MetricsQuery, Page

from .alert_history import AlertHistory, alert_history
from .alertmanager import Alertmanager, AmAlert
from .matching import DEFAULT_SERVICE_MATCHES, ServiceMatch
from .prometheus import Prometheus
from .series_text import fmt_time

DEFAULT_LOOKBACK = timedelta(hours=1)  # how far back "recently resolved" reaches without a window


def _history_item(h: AlertHistory) -> dict[str, Any]:
    fired = [i for i in h.intervals if i.state == "firing"] or list(h.intervals)
    first, last = fired[0], fired[-1]
    until = last.end or last.last_seen
    item: dict[str, Any] = {"alert_name": h.alertname, "service": h.service, "state": h.state}
    item["duration"] = h.span((until - first.start).total_seconds())
    item["starts_at"] = fmt_time((first.active_since or first.start).timestamp())
    if last.end is not None:
        item["resolved_at"] = fmt_time(last.end.timestamp())
    if "severity" in h.labels:
        item["severity"] = h.labels["severity"]
    item["labels"] = {k: v for k, v in sorted(h.labels.items()) if k != "alertname"}
    item["source"] = "prometheus ALERTS history"
    item["history"] = h.text()
    return {k: v for k, v in item.items() if v is not None}


def _same_alert(history_labels: Mapping[str, str], alert: AmAlert) -> bool:
    # Alertmanager's labels are the rule's plus any external labels: a superset of ALERTS' labels.
    return all(alert.labels.get(k) == v for k, v in history_labels.items())


def _state_matches(wanted: str | None, state: str) -> bool:
    if wanted is None:
        return True
    if wanted == "firing":
        return state in ("firing", "silenced", "inhibited")
    return state == wanted


class LiveAlerts:
    """The alert source over the live servers: answers MetricsQuery from Alertmanager and / or
    Prometheus (at least one)."""

    def __init__(
        self,
        alertmanager: Alertmanager | None,
        prometheus: Prometheus | None,
        matches: tuple[ServiceMatch, ...] = DEFAULT_SERVICE_MATCHES,
    ) -> None:
        if alertmanager is None and prometheus is None:
            raise ValueError("LiveAlerts needs Alertmanager, Prometheus or both")
        self.alertmanager, self.prometheus, self.matches = alertmanager, prometheus, matches

    async def query_alerts(self, q: MetricsQuery, now: datetime) -> Page:
        active: list[AmAlert] = []
        if self.alertmanager is not None and (
            q.window.until is None or q.window.until >= now - timedelta(minutes=1)
        ):
            active = [
                a
                for a in await self.alertmanager.find(service=q.service, alertname=q.alert_name)
                if a.starts_at is None or q.window.until is None or a.starts_at <= q.window.until
            ]
        items = [a.item(now) for a in active]
        if self.prometheus is not None:
            end = min(q.window.until or now, now)
            start = q.window.since or end - DEFAULT_LOOKBACK
            # The finest step the guard allows, so resolved_at is as exact as the bounds permit.
            histories = await alert_history(
                self.prometheus, alertname=q.alert_name, service=q.service, start=start, end=end,
                step_s=self.prometheus.limits.min_step_s, matches=self.matches,
            )  # fmt: skip
            for h in histories:
                if self.alertmanager is not None and any(_same_alert(h.labels, a) for a in active):
                    continue  # Alertmanager's view of an active alert is the richer one
                if self.alertmanager is not None and h.state != "resolved":
                    continue  # active per Prometheus but not (yet) in Alertmanager: report AM's view only
                items.append(_history_item(h))
        matched = [i for i in items if _state_matches(q.state, i["state"])]
        # Active first, then newest first: the fixture backend's order (display times sort as text).
        matched.sort(key=lambda i: str(i.get("starts_at", "")), reverse=True)
        matched.sort(key=lambda i: i["state"] == "resolved")
        return Page(matched[: q.limit], len(matched))
