"""Follow the dependency: when a question asks about what a service depends on ("its upstream", "the
database it cannot reach", "上游", "依赖的数据库") and the service's evidence names another known
service (a cluster DNS name `billing-db.billing.svc.cluster.local`, `upstream=fare-search`,
`peer.service=...`), that service's alerts and log patterns are gathered too, once.

The follow-up states what those checks returned about the other service, as any survey does; the
link between the two is the evidence's own words (the address it quotes), never a cause of ours.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from evigate.rules.enums import ToolName
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, PlannedCall, survey_calls
from evigate.server.sources.services import CatalogView
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.entities import Entities

_ASKS = re.compile(
    r"\b(?:up|down)stream|\bdepend(?:s|ency|encies|ing)?\b|\bdatabase\b|\bbackend\b|\bwrites? to\b"
    r"|\bstore it\b|\bcalls?\b|\bpeer\b|\bwhich service\b|\broot cause|\bcascad|\bcaused by\b|\bwhy\b"
    r"|\bwhat(?:'s| is) causing\b|为什么|根因|根本原因|原因|导致"
    r"|上游|下游|依赖|数据库|连不上|调用的|后端|哪个服务",
    re.IGNORECASE,
)
# "what was wrong with it at the time?": the dependency's logs around the evidence that named it.
_AT_THE_TIME = re.compile(r"\bat (?:that|the) time\b|\bback then\b|当时|那时", re.IGNORECASE)
_SPAN = re.compile(r"\bfirst=(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\b.*?\blast=(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\b")
MARGIN = timedelta(minutes=10)
# A Kubernetes service's DNS name, or a field that names a peer.
_NAMED = re.compile(
    r"\b([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)\.[a-z0-9-]+\.svc(?:\.cluster\.local)?\b"
    r"|\b(?:upstream|peer\.service|peer_service|target|datasource)[=:]\s*\"?(?:https?://)?"
    r"([A-Za-z0-9][A-Za-z0-9_.-]*)",
)
# host:port, where the host is a known service by its own name ("postgres:5432 - no response")
_HOST_PORT = re.compile(r"(?<![\w.:/-])([a-z][a-z0-9-]*[a-z0-9]):\d{2,5}\b")


def asks_dependency(question: str) -> bool:
    return _ASKS.search(question) is not None


def named_dependency(
    results: Sequence[tuple[PlannedCall, ToolCallResult]], asked: Collection[str], view: CatalogView
) -> str | None:
    """The first known service other than the asked ones that the evidence names, in result order."""
    found = _named(results, asked, view)
    return found[0] if found is not None else None


def _named(
    results: Sequence[tuple[PlannedCall, ToolCallResult]], asked: Collection[str], view: CatalogView
) -> tuple[str, str] | None:
    """(service, the ref text that names it)."""
    for call, result in results:
        if call.tool_name == ToolName.LIST_SERVICES:
            continue
        for ref in c.refs_of(result):
            if ref.raw_path == "$.no_evidence":
                continue
            for match in _NAMED.finditer(ref.text):
                host = (match.group(1) or match.group(2) or "").split(".", 1)[0].split(":", 1)[0]
                found = view.match(host) if host else None
                if found is not None and found.name not in asked:
                    return found.name, ref.text
            for match in _HOST_PORT.finditer(ref.text):
                found = view.match(match.group(1))
                if found is not None and found.how == "exact" and found.name not in asked:
                    return found.name, ref.text
    return None


def _span(text: str) -> dict[str, str]:
    """since / until around the first and last time of the pattern that named the dependency."""
    m = _SPAN.search(text)
    if m is None:
        return {}
    first, last = (datetime.fromisoformat(t).replace(tzinfo=UTC) for t in m.groups())
    return {
        "since": f"{first - MARGIN:%Y-%m-%dT%H:%M:%SZ}",
        "until": f"{last + MARGIN:%Y-%m-%dT%H:%M:%SZ}",
    }


def follow_up_calls(
    question: str,
    entities: Entities,
    results: Sequence[tuple[PlannedCall, ToolCallResult]],
    view: CatalogView | None,
    available: Collection[str],
) -> list[PlannedCall]:
    """One bounded survey of the dependency the evidence names, when the question asks about one."""
    if view is None or not entities.services or not asks_dependency(question):
        return []
    named = _named(results, entities.services, view)
    if named is None:
        return []
    other, text = named
    followed = Entities(
        services=(other,),
        alert_names=(),
        log_terms=(),
        level=None,
        window_minutes=entities.window_minutes,
        current=entities.current,
        resolved=False,
        intents=("survey",),
        clock=entities.clock,
    )
    calls = survey_calls(followed, available)
    # "at the time" is when the evidence named it, inside any part of the day the question gave
    span = _span(text) if _AT_THE_TIME.search(question) else {}
    if not span:
        return calls
    # at the time: every template of the dependency in those minutes, whatever its level
    return [
        replace(call, arguments={**call.arguments, "level": "INFO", **span}, level="INFO", purpose="")
        if call.tool_name == SUMMARIZE_LOGS
        else call
        for call in calls
    ]
