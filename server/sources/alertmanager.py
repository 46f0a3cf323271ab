"""Alertmanager API v2: the alerts active now (firing, or suppressed by a silence or an inhibition).

Resolved alerts are not listed by Alertmanager; their history comes from Prometheus' `ALERTS` series
(alert_history). `AmAlert.item()` shapes an alert the way query_metrics items look.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from .http import SourceClient, SourceError, SourceHealth
from .matching import DEFAULT_SERVICE_MATCHES, ServiceMatch, promql_string, re2_escape, service_of
from .prom_types import BadAnswerError, parse_time
from .series_text import fmt_duration, fmt_time
from .sources_config import SourceSettings

_PATHS = frozenset({"/api/v2/alerts", "/api/v2/status", "/-/ready"})
_VALUE_KEYS = ("value", "current", "current_value", "currentValue")
# A number counts as the current value only after a cue ("is 92%", "value=92", "当前 92%"), so
# "CPU above 80% for 5m" does not pass a threshold off as the reading.
_VALUE_IN_TEXT = re.compile(
    r"(?:\b(?:value|current(?:ly)?|is|now|at|reached)\b\s*[:=]?\s*|[:=]\s*|当前值?[为是:：]?\s*|达到\s*|为\s*)"
    r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\s*(?:%|ms|s|[KMGT]i?B)?)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AmAlert:
    fingerprint: str
    alertname: str
    service: str | None
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    state: str  # active | suppressed | unprocessed
    silenced_by: tuple[str, ...]
    inhibited_by: tuple[str, ...]
    starts_at: datetime | None
    ends_at: datetime | None
    updated_at: datetime | None
    generator_url: str | None
    receivers: tuple[str, ...]
    current: str | None  # the reading an annotation, label or the summary carries
    current_from: str | None  # where `current` came from: annotation:value, label:current, summary, ...

    @property
    def summary(self) -> str | None:
        return self.annotations.get("summary")

    @property
    def description(self) -> str | None:
        return self.annotations.get("description")

    @property
    def runbook_url(self) -> str | None:
        return self.annotations.get("runbook_url")

    @property
    def status(self) -> str:
        """firing | silenced | inhibited | unprocessed: the word a claim uses."""
        if self.state == "active":
            return "firing"
        if self.state == "suppressed":
            return "silenced" if self.silenced_by else "inhibited"
        return self.state

    def item(self, now: datetime | None = None) -> dict[str, Any]:
        """The query_metrics item: alert_name, service, state, current, duration, then the rest."""
        now = now or datetime.now(UTC)
        item: dict[str, Any] = {"alert_name": self.alertname, "service": self.service, "state": self.status}
        if self.current is not None:
            item["current"] = self.current
        if self.starts_at is not None:
            item["duration"] = fmt_duration(max(0.0, (now - self.starts_at).total_seconds()))
            item["starts_at"] = fmt_time(self.starts_at.timestamp())
        for key in ("severity",):
            if key in self.labels:
                item[key] = self.labels[key]
        for key in ("summary", "description", "runbook_url"):
            if self.annotations.get(key):
                item[key] = self.annotations[key]
        if self.silenced_by:
            item["silenced_by"] = list(self.silenced_by)
        if self.inhibited_by:
            item["inhibited_by"] = list(self.inhibited_by)
        item["labels"] = {k: v for k, v in sorted(self.labels.items()) if k not in ("alertname",)}
        item["fingerprint"] = self.fingerprint
        return {k: v for k, v in item.items() if v is not None}


def current_value(labels: Mapping[str, str], annotations: Mapping[str, str]) -> tuple[str | None, str | None]:
    for where, mapping in (("annotation", annotations), ("label", labels)):
        for key in _VALUE_KEYS:
            if mapping.get(key):
                return " ".join(mapping[key].split()), f"{where}:{key}"
    for key in ("summary", "description"):
        m = _VALUE_IN_TEXT.search(annotations.get(key, ""))
        if m:
            return m.group(1).replace(" ", ""), key
    return None, None


def parse_alert(raw: Any, matches: Sequence[ServiceMatch] = DEFAULT_SERVICE_MATCHES) -> AmAlert:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("labels"), Mapping):
        raise BadAnswerError("alert without labels")
    labels = {str(k): str(v) for k, v in raw["labels"].items()}
    annotations = {str(k): str(v) for k, v in (raw.get("annotations") or {}).items()}
    status = raw.get("status") or {}
    current, current_from = current_value(labels, annotations)
    return AmAlert(
        fingerprint=str(raw.get("fingerprint", "")),
        alertname=labels.get("alertname", ""),
        service=service_of(labels, matches),
        labels=labels,
        annotations=annotations,
        state=str(status.get("state", "unprocessed")),
        silenced_by=tuple(str(s) for s in status.get("silencedBy") or ()),
        inhibited_by=tuple(str(s) for s in status.get("inhibitedBy") or ()),
        starts_at=parse_time(raw.get("startsAt")),
        ends_at=parse_time(raw.get("endsAt")),
        updated_at=parse_time(raw.get("updatedAt")),
        generator_url=str(raw["generatorURL"]) if raw.get("generatorURL") else None,
        receivers=tuple(str(r.get("name", "")) for r in raw.get("receivers") or ()),
        current=current,
        current_from=current_from,
    )


class Alertmanager:
    """One Alertmanager; one pooled client for its lifetime (`aclose` when done)."""

    def __init__(
        self,
        settings: SourceSettings,
        matches: Sequence[ServiceMatch] = DEFAULT_SERVICE_MATCHES,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.matches = tuple(matches)
        self.http = SourceClient(settings, _PATHS.__contains__, transport=transport)

    @property
    def name(self) -> str:
        return self.http.name

    async def aclose(self) -> None:
        await self.http.aclose()

    async def alerts(
        self,
        *,
        active: bool = True,
        silenced: bool = True,
        inhibited: bool = True,
        unprocessed: bool = True,
        matchers: Sequence[str] = (),
        receiver: str | None = None,
    ) -> list[AmAlert]:
        """`/api/v2/alerts` with its own filters; `matchers` are Alertmanager's (`alertname="X"`,
        `severity=~"crit.*"`), all of which must hold."""
        params = [
            ("active", str(active).lower()),
            ("silenced", str(silenced).lower()),
            ("inhibited", str(inhibited).lower()),
            ("unprocessed", str(unprocessed).lower()),
            *(("filter", m) for m in matchers),
        ]
        if receiver:
            params.append(("receiver", receiver))
        data = await self.http.get_json("/api/v2/alerts", params)
        if not isinstance(data, list):
            raise self.http.error("bad_response", "alerts answer is not a list")
        try:
            alerts = [parse_alert(a, self.matches) for a in data]
        except (BadAnswerError, AttributeError, TypeError) as exc:
            raise self.http.error("bad_response", f"unexpected alerts answer: {exc}") from exc
        # Oldest first, then by name: a stable order for `$.alerts[i]`.
        return sorted(
            alerts,
            key=lambda a: (a.starts_at or datetime.min.replace(tzinfo=UTC), a.alertname, a.fingerprint),
        )

    async def find(
        self, *, service: str | None = None, alertname: str | None = None, include_suppressed: bool = True
    ) -> list[AmAlert]:
        """Alerts for one service (any configured service label) and / or alert name."""
        # The server-side filter narrows the transfer; the exact, case-insensitive test is ours.
        matchers = [f"alertname=~{promql_string('(?i)' + re2_escape(alertname))}"] if alertname else []
        alerts = await self.alerts(
            silenced=include_suppressed, inhibited=include_suppressed, matchers=matchers
        )
        return [
            a
            for a in alerts
            if (not alertname or a.alertname.lower() == alertname.lower())
            and (not service or any(m.matches(a.labels, service) for m in self.matches))
        ]

    async def health(self) -> SourceHealth:
        base = self.http.settings.base_url
        try:
            data = await self.http.get_json("/api/v2/status")
        except SourceError as exc:
            return SourceHealth(
                self.name,
                base,
                reachable=exc.kind not in ("unreachable", "timeout"),
                ready=False,
                detail=str(exc),
            )
        version = (data.get("versionInfo") or {}).get("version") if isinstance(data, Mapping) else None
        started = parse_time(data.get("uptime")) if isinstance(data, Mapping) else None
        cluster = (data.get("cluster") or {}).get("status") if isinstance(data, Mapping) else None
        return SourceHealth(
            self.name,
            base,
            True,
            True,
            str(version) if version else None,
            started,
            f"cluster {cluster}" if cluster else None,
        )
