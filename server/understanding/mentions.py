"""The services and alerts a question names, resolved against the service catalog.

A service is found by the catalog (exact name with any case or separators, alias, unique partial
name). A word shaped like a service name that the catalog does not know is kept as an unknown
service ("no source knows it"), never dropped and never replaced by another service. Without a
catalog (a backend that keeps none) service-shaped names are taken as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from evigate.server.sources.names import normalize
from evigate.server.sources.services import GENERIC_PARTS, CatalogView, ServiceMatch
from evigate.server.understanding.subject_words import _EN_STOP
from evigate.server.understanding.symptoms import COMPONENT_WORDS, Symptom, paraphrased_alerts

_CAMEL_RE = re.compile(r"(?<![A-Za-z0-9_-])([A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]*)+)(?![A-Za-z0-9_-])")
# Lowercase hyphenated names (billing-worker, mail-relay) and the classic *-service / gateway.
_NAME_RE = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+|gateway)(?![A-Za-z0-9_-])")
# Where a word is a service by its place in the question, whatever its shape.
_BEFORE = re.compile(r"(?:\b(?:on|for|does|is|has|have|with|about|from|of|in|at|did|service)\s+|^)$", re.I)
_AFTER = re.compile(
    r"^(?:'s|’s|\s*(?:的|有|现在|当前|最近|是|怎么|为什么|服务|service\b|logs?\b|alerts?\b|ha(?:ve|s)\b)|\s*[?？,，]|$)"
)
# A one-word name in a service's place: "does ledger have …", "ledger's …", "… on ledger?",
# "ledger 有告警吗", "为什么 ledger 报错". Only in a question that names no catalog name.
_WORD_PLACES = (
    re.compile(r"\bdoes\s+([a-z][a-z0-9_]{2,})\s+(?:have|log|show)\b", re.I),
    re.compile(r"\b([a-z][a-z0-9_]{2,})(?:'s|’s)\s", re.I),
    re.compile(r"\b(?:on|for)\s+([a-z][a-z0-9_]{2,})\s*(?:[?？.]|$|right now|now\b|in the\b)", re.I),
    re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]{2,})\s*(?:的|有|现在|最近|是否|怎么|为什么|出)"),
    re.compile(r"为什么\s*([A-Za-z][A-Za-z0-9_]{2,})\s*(?:会|总|一直|报|又|出|这么|很|的)"),
    # The one thing a state is said of, as the whole subject of its clause: "auth is down", "users
    # say auth is failing", "why is auth down?", "用户说 auth 挂了".
    re.compile(
        r"(?:^|[,;:.!?]\s*|\b(?:says?|said|that|and|but|because|now|is)\s+)([a-z][a-z0-9_]{2,})\s+"
        r"(?:(?:is|was|seems|keeps|looks|has\s+been|went|goes)\s+)?(?:(?:still|completely|totally|really)\s+)?"
        r"(?:down|broken|failing|slow|unavailable|unreachable|dead|crashing|flaky|erroring|timing\s+out"
        r"|not\s+working|not\s+responding|offline|hanging|degraded)\b",
        re.I,
    ),
    re.compile(
        r"(?:^|[，,。；;：:\s]|说|为什么)\s*([A-Za-z][A-Za-z0-9_]{2,})\s*(?:又|总是|一直|突然)?"
        r"(?:挂了|挂掉|宕机|崩了|崩溃|不可用|很慢|变慢|不工作|访问不了|无法访问)"
    ),
)
_COMMON_WORDS = frozenset(
    [
        "any",
        "the",
        "this",
        "that",
        "there",
        "it",
        "its",
        "anything",
        "something",
        "everything",
        "nothing",
        "someone",
        "today",
        "now",
        "service",
        "services",
        "app",
        "apps",
        "system",
        "systems",
        "server",
        "cluster",
        "prod",
        "production",
        "staging",
        "test",
        "it's",
        "what",
        "which",
        "error",
        "errors",
        "warn",
        "warning",
        "logs",
        "log",
        "alert",
        "alerts",
        "cpu",
        "memory",
        "heap",
        "disk",
        "latency",
        "network",
        "queue",
    ]
)
_NOT_SERVICES = re.compile(
    r"(?i)^(?:hikaripool-\d+|x-[a-z-]+|utf-8|e-mail|[a-z]+-level|pre-[a-z]+|re-[a-z]+)$"
)


@dataclass(frozen=True)
class Mentions:
    services: tuple[str, ...]  # canonical names, in order of appearance
    matches: tuple[ServiceMatch, ...]  # how each was matched (for the plan)
    unknown: tuple[str, ...]  # service-shaped names no source knows
    spans: tuple[tuple[int, int], ...]  # where services (known or unknown) were named


def _service_shaped(question: str, start: int, end: int, word: str) -> bool:
    if _NOT_SERVICES.match(word):
        return False
    tail = word.lower().rsplit("-", 1)[-1]
    if tail in GENERIC_PARTS or word.lower() == "gateway":
        return True
    return bool(_BEFORE.search(question[:start])) and bool(_AFTER.match(question[end:]))


def _exactness(match: ServiceMatch) -> int:
    return {"exact": 0, "alias": 1}.get(match.how, 2)


def services_in(question: str, catalog: CatalogView | None, skip: Iterable[str] = ()) -> Mentions:
    """The services `question` names. `skip`: words that are other entities (alert names)."""
    skipped = {s.lower() for s in skip}
    matches = catalog.find_in(question) if catalog is not None and catalog.services else []
    matches = [m for m in matches if m.mention.lower() not in skipped]
    taken = [(m.start, m.end) for m in matches]
    first: dict[str, ServiceMatch] = {}
    for match in matches:
        # one mention per service: its name written out rather than a word of it ("the logs of the
        # deployment `x-deployment`" names x-deployment by its name, not by "deployment")
        earlier = first.get(match.name)
        if earlier is None or (_exactness(match) < _exactness(earlier)):
            first[match.name] = match
    matches = sorted(first.values(), key=lambda m: m.start)
    unknown: list[tuple[int, str]] = []
    for m in _NAME_RE.finditer(question):
        word = m.group(1)
        if any(s <= m.start() < e for s, e in taken) or word.lower() in skipped:
            continue
        if not _service_shaped(question, m.start(), m.end(), word):
            continue
        taken.append(m.span(1))
        unknown.append((m.start(), word.lower()))
    if catalog is not None and catalog.services and not matches:
        # a plain word in a service's place is a name only when the question names no known service
        # ("the journal writer's queue" of ledger-api is a part of ledger-api, not a service)
        for pattern in _WORD_PLACES:
            for m in pattern.finditer(question):
                word = m.group(1)
                lowered = word.lower()
                if any(s <= m.start(1) < e for s, e in taken) or lowered in skipped:
                    continue
                if lowered in _COMMON_WORDS or lowered in COMPONENT_WORDS or lowered in _EN_STOP:
                    continue  # a function word, a pronoun, a technology: never a service's name
                if not word.isascii():
                    continue
                if re.search(r"[A-Z].*[A-Z]", word):  # CamelCase: an alert or a class, not a service
                    continue
                taken.append(m.span(1))
                unknown.append((m.start(1), lowered))
    if catalog is None or not catalog.services:
        # No catalog to check against: names are taken as written.
        ordered = sorted([(m.start, m.name) for m in matches] + unknown)
        return Mentions(tuple(dict.fromkeys(n for _, n in ordered)), tuple(matches), (), tuple(taken))
    return Mentions(
        tuple(m.name for m in matches),
        tuple(matches),
        tuple(dict.fromkeys(n for _, n in unknown)),
        tuple(taken),
    )


# Kubernetes kinds a question may name its subject by ("the billing-db StatefulSet").
_KINDS = frozenset(
    ["statefulset", "daemonset", "replicaset", "cronjob", "configmap", "persistentvolumeclaim"]
)


def alerts_in(question: str, catalog: CatalogView | None, skip: Iterable[str]) -> list[tuple[int, str]]:
    """(position, name) of alert names written out: CamelCase words (the catalog's spelling when it
    knows them) and the catalog's names in any case."""
    known = {name.lower(): name for name in (catalog.alert_names if catalog is not None else ())}
    skipped = {s.lower() for s in skip}
    found: list[tuple[int, str]] = []
    for m in _CAMEL_RE.finditer(question):
        word = m.group(1)
        if word.lower() in skipped or word.endswith(("Exception", "Error")) or word.startswith("Hikari"):
            continue
        if word.lower() not in known and word.lower() in COMPONENT_WORDS | _KINDS:
            continue  # "RabbitMQ", "MongoDB": a technology; "StatefulSet": a kind of workload
        if word.lower() not in known and not re.search(r"[A-Z][a-z]+.*[A-Z]", word):
            continue
        if word.lower() not in known and _names_service(catalog, word):
            continue  # "OrderRouter" is the service order-router: an alert only if an alert source knows it
        found.append((m.start(), known.get(word.lower(), word)))
    lowered = question.lower()
    for lower_name, name in known.items():
        hit = re.search(r"(?<![a-z0-9])" + re.escape(lower_name) + r"(?![a-z0-9])", lowered)
        if hit is not None:
            found.append((hit.start(), name))
    return found


def _names_service(catalog: CatalogView | None, word: str) -> bool:
    """Whether the catalog knows `word` as a service, in any case or with any separators."""
    if catalog is None or not catalog.services:
        return False
    match = catalog.match(word)
    return match is not None and match.how in ("exact", "alias")


def paraphrase_alerts(
    question: str,
    catalog: CatalogView | None,
    found: list[Symptom],
    service_spans: Iterable[tuple[int, int]],
    services: Iterable[str] = (),
) -> list[str]:
    """The catalog's alerts a question describes by its words and symptoms, outside service names;
    for a question about a service, never an alert whose name is another service's ("hotel-inventory
    的错误率告警" is not GatewayUpstream5xxRatioHigh nor OrderRouterErrorBudgetBurn)."""
    if catalog is None or not catalog.alert_names:
        return []
    spans = list(service_spans)
    words = [
        m.group(0)
        for m in re.finditer(r"[A-Za-z][A-Za-z0-9]+", question)
        if not any(s <= m.start() < e for s, e in spans)
    ]
    asked = {normalize(name) for name in services}
    others = [
        known
        for known in map(normalize, catalog.services)
        if len(known) >= 4 and not any(known in name for name in asked)
    ]
    return [
        alert
        for alert in paraphrased_alerts(words, found, catalog.alert_names)
        if not asked or not any(other in normalize(alert) for other in others)
    ]
