"""The service catalog: which services the sources know, and which one a name in a question means.

Names come from the sources themselves (docs/design.md §6.9): alert labels (service / app / job),
log services, knowledge front matter (`services:`), and any other source that offers sightings
(Prometheus label values where configured). Aliases (Chinese names, team names) come from config.
Matching tolerates case, separators and partial names; a name that matches nothing is reported
with the closest known names, never silently replaced by another service.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from evigate.server.queries.types import MetricsQuery, Page, TimeWindow
from evigate.server.sources.names import by_closeness, near, normalize, parts, team_prefixed

log = logging.getLogger("evigate.services")
STOP_WAIT_S = 5.0
# Name parts that say what kind of thing a service is; alone they name no service ("the worker").
GENERIC_PARTS = frozenset(
    [
        "service",
        "svc",
        "api",
        "app",
        "server",
        "worker",
        "consumer",
        "producer",
        "job",
        "web",
        "gateway",
        "proxy",
        "engine",
        "relay",
        "daemon",
        "backend",
        "frontend",
        "db",
        "cache",
        "queue",
        "the",
        "a",
        "an",
        "prod",
        "staging",
        "dev",
        "test",
    ]
)
MAX_SUGGESTIONS = 3
KNOWN_LISTED = 10  # a name no source knows: the known services listed, closest first, at most


@dataclass(frozen=True)
class Sighting:
    """A service name one source holds ("log", "alert", "knowledge", "prometheus", "config")."""

    name: str
    source: str
    namespace: str = ""  # the Kubernetes namespace it was seen in, when the source says


@dataclass(frozen=True)
class Sightings:
    """What a source knows: services, alert names and runbook keys (for paraphrase matching)."""

    services: tuple[Sighting, ...] = ()
    alert_names: tuple[str, ...] = ()
    knowledge_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServiceMatch:
    name: str  # canonical
    how: str  # exact | alias | partial | fuzzy | semantic
    mention: str  # the words of the question it was found in
    start: int = 0
    end: int = 0
    # semantic: the similarity of the mention to the name, the runner-up name and the lead over it
    score: float = 0.0
    runner_up: str = ""
    margin: float = 0.0


def _flexible(name: str) -> re.Pattern[str]:
    """`name` in a question, written with any separators or none, as whole words."""
    pieces = parts(name)
    body = r"[\s_.\-/]*".join(re.escape(p) for p in pieces)
    return re.compile(r"(?<![a-z0-9_-])" + body + r"(?![a-z0-9_])", re.IGNORECASE)


@dataclass(frozen=True)
class CatalogView:
    """One refresh of the catalog: immutable, safe to share between sessions."""

    services: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name → sources
    aliases: Mapping[str, str] = field(default_factory=dict)  # alias → canonical name
    alert_names: tuple[str, ...] = ()
    knowledge_keys: tuple[str, ...] = ()
    namespaces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # namespace → services
    # A service one question names by meaning (semantic_names.py): a copy of the view for that
    # question only, found where its words are in it.
    semantic: tuple[ServiceMatch, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.services)

    def match(self, name: str) -> ServiceMatch | None:
        """The service `name` means: exact (case and separators aside), alias, or a unique partial."""
        wanted = normalize(name)
        if not wanted:
            return None
        for known in self.services:
            if normalize(known) == wanted:
                return ServiceMatch(known, "exact", name)
        for alias, known in self.aliases.items():
            if normalize(alias) == wanted:
                return ServiceMatch(known, "alias", name)
        candidates = self._partial(parts(name))
        return ServiceMatch(candidates[0], "partial", name) if len(candidates) == 1 else None

    def _partial(self, words: Sequence[str]) -> list[str]:
        """Names whose parts start with `words` ("orders" → orders-consumer), or that hold all of
        the distinctive words ("redis" → session-redis)."""
        distinctive = [w for w in words if w not in GENERIC_PARTS]
        generic = [w for w in words if w in GENERIC_PARTS]
        if not distinctive:
            return []
        out = []
        for known in self.services:
            known_parts = parts(known)
            # "billing-service" is not billing-worker: a kind the name states must be the service's.
            if not all(w in known_parts for w in [*distinctive, *generic]):
                continue
            out.append(known)
        return out

    def closest(self, name: str, count: int = MAX_SUGGESTIONS) -> list[str]:
        """Every known name (or alias's service), closest to `name` first: for "no source knows X;
        did you mean …"."""
        pool = {normalize(known): known for known in self.services}
        pool.update({normalize(alias): known for alias, known in self.aliases.items()})
        return by_closeness(name, pool, GENERIC_PARTS)[:count]

    def find_in(self, question: str) -> list[ServiceMatch]:
        """Every mention of a known service in the question, in order of appearance (of overlapping
        mentions the longest wins; a service named twice is there twice)."""
        found: list[ServiceMatch] = []
        for known in self.services:
            for m in _flexible(known).finditer(question):
                found.append(ServiceMatch(known, "exact", m.group(0), m.start(), m.end()))
        for alias, known in self.aliases.items():
            if alias.isascii():
                hits = [(m.start(), m.end()) for m in _flexible(alias).finditer(question)]
            else:
                hits = [(m.start(), m.end()) for m in re.finditer(re.escape(alias), question)]
            found.extend(ServiceMatch(known, "alias", question[s:e], s, e) for s, e in hits)
        found.extend(self._partial_mentions(question, found))
        found.extend(self._fuzzy_mentions(question, found))
        found.extend(m for m in self.semantic if question[m.start : m.end] == m.mention)
        kept: list[ServiceMatch] = []
        for match in sorted(found, key=lambda m: (m.start, -(m.end - m.start))):
            if any(k.start <= match.start < k.end for k in kept):
                continue
            kept.append(match)
        return kept

    def _partial_mentions(self, question: str, taken: Sequence[ServiceMatch]) -> list[ServiceMatch]:
        """Names of one or two words ("orders consumer", "redis") that name exactly one service by its
        parts. A hyphenated name is taken whole: "billing-service" is not a partial billing-worker."""
        chunks = list(re.finditer(r"[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*", question))
        out: list[ServiceMatch] = []
        for i, first in enumerate(chunks):
            if any(t.start <= first.start() < t.end for t in taken):
                continue
            run_options = [[first]] if re.search(r"[-_]", first.group(0)) else [chunks[i : i + 2], [first]]
            for run in run_options:
                if len(run) == 2 and (
                    re.search(r"[-_]", run[1].group(0))
                    or not re.fullmatch(r"\s", question[run[0].end() : run[1].start()])
                ):
                    continue
                text = question[run[0].start() : run[-1].end()]
                words = parts(text)
                if len(words) == 1 and (words[0] in GENERIC_PARTS or len(words[0]) < 4):
                    continue
                candidates = self._partial(words)
                if len(candidates) == 1:
                    out.append(ServiceMatch(candidates[0], "partial", text, run[0].start(), run[-1].end()))
                    break
        return out

    def _fuzzy_mentions(self, question: str, taken: Sequence[ServiceMatch]) -> list[ServiceMatch]:
        """Names written in another word order ("sync ledger") or with one letter off ("ledgr-sync"):
        a run of one to three words that means exactly one service that way."""
        chunks = list(re.finditer(r"[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*", question))
        out: list[ServiceMatch] = []
        for i in range(len(chunks)):
            if any(t.start <= chunks[i].start() < t.end for t in [*taken, *out]):
                continue
            for size in (3, 2, 1):
                run = chunks[i : i + size]
                gaps = [question[a.end() : b.start()] for a, b in itertools.pairwise(run)]
                if len(run) < size or any(not re.fullmatch(r"\s+", gap) for gap in gaps):
                    continue
                text = question[run[0].start() : run[-1].end()]
                candidates = [known for known in self.services if near(text, known)]
                if len(candidates) == 1:
                    out.append(ServiceMatch(candidates[0], "fuzzy", text, run[0].start(), run[-1].end()))
                    break
        return out


def load_aliases(path: Path | None) -> dict[str, str]:
    """{"billing-worker": ["账单服务", "billing team"]} → alias → canonical. Missing file: none."""
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"service aliases {path}: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ValueError(f"service aliases {path}: expected an object of name → [aliases]")
    out: dict[str, str] = {}
    for name, aliases in data.items():
        values = [aliases] if isinstance(aliases, str) else aliases
        if not isinstance(values, list) or not all(isinstance(a, str) for a in values):
            raise ValueError(f"service aliases {path}: {name!r} needs a list of strings")
        out.update({alias: str(name) for alias in values if alias.strip()})
    return out


SightingReader = Callable[[], Awaitable[Sightings]]
# Alert labels that name a service (Prometheus conventions) besides the alert's own `service`.
_SERVICE_LABELS = ("service", "app", "job", "app_kubernetes_io_name")
POD_SUFFIX = re.compile(r"-[a-z0-9]{5,10}(?:-[a-z0-9]{5})?$")


class AlertQuerying(Protocol):
    """What alert_sightings reads: an alert source (a file, a live server)."""

    async def query_alerts(self, query: MetricsQuery, now: datetime) -> Page: ...


async def alert_sightings(source: AlertQuerying, now: datetime) -> Sightings:
    """The one reader of the names in alerts (every state, no window): the alert's service, its
    service labels, and the deployment a pod name stands for (its hash suffixes stripped)."""
    page = await source.query_alerts(MetricsQuery(None, None, None, TimeWindow(None, None), 1000), now)
    found: list[Sighting] = []
    names: list[str] = []
    for item in page.items:
        raw_labels = item.get("labels")
        labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
        namespace = str(labels["namespace"]) if isinstance(labels.get("namespace"), str) else ""
        if isinstance(item.get("service"), str):
            found.append(Sighting(item["service"], "alert", namespace))
        found.extend(Sighting(labels[k], "alert") for k in _SERVICE_LABELS if isinstance(labels.get(k), str))
        pod = labels.get("pod")
        if isinstance(pod, str) and POD_SUFFIX.search(pod):
            found.append(Sighting(POD_SUFFIX.sub("", pod), "alert"))
        if isinstance(item.get("alert_name"), str):
            names.append(item["alert_name"])
    return Sightings(tuple(found), tuple(dict.fromkeys(names)))


async def prometheus_sightings(
    label_values: Callable[[str], Awaitable[list[str]]], labels: Sequence[str]
) -> Sightings:
    """The values of Prometheus's service labels (service / job / app, as the signal catalog's
    service matchers name them)."""
    found: list[Sighting] = []
    for label in labels:
        found.extend(Sighting(value, "prometheus") for value in await label_values(label))
    return Sightings(tuple(found))


class ServiceCatalog:
    """The current CatalogView, rebuilt from the readers by `refresh()` (and a background task)."""

    def __init__(self, readers: Iterable[SightingReader] = (), aliases: Mapping[str, str] | None = None):
        self._readers = list(readers)
        self._aliases = dict(aliases or {})
        self._view = CatalogView(aliases=dict(self._aliases))
        self._task: asyncio.Task[None] | None = None
        self._refreshed = False
        self._refreshed_at = 0.0  # time.monotonic() when the last refresh began
        self._miss_lock = asyncio.Lock()
        self.failures: tuple[str, ...] = ()  # readers that failed in the last refresh
        self.by_meaning: object | None = None  # the names' vectors (understanding/semantic_names.py)

    def add_reader(self, reader: SightingReader) -> None:
        self._readers.append(reader)

    def add_aliases(self, aliases: Mapping[str, str]) -> None:
        """Aliases from config, on top of the data's own (they apply from the next refresh)."""
        self._aliases.update(aliases)

    def view(self) -> CatalogView:
        return self._view

    async def ensure(self) -> CatalogView:
        """The current view; the first call builds it (later ones read what the refresh task keeps)."""
        if not self._refreshed:
            await self.refresh()
        return self._view

    async def on_miss(self, asked_at: float) -> CatalogView:
        """A name of a question asked at `asked_at` (time.monotonic()) matched nothing: re-read the
        sources (a service that appeared since the last refresh) unless a refresh began after the
        question was asked; questions missing at once share one refresh."""
        async with self._miss_lock:
            if self._refreshed_at < asked_at:
                await self.refresh()
        return self._view

    async def refresh(self) -> CatalogView:
        started = time.monotonic()
        services: dict[str, list[str]] = {}
        alerts: list[str] = []
        keys: list[str] = []
        failures: list[str] = []
        placed: list[tuple[str, str]] = []  # (namespace, service)
        for reader in self._readers:
            try:
                seen = await reader()
            except Exception as exc:  # a source that is down keeps no one from the others' names
                failures.append(f"{exc}")
                log.warning("service catalog source failed", extra={"error": str(exc)})
                continue
            for sighting in seen.services:
                name = sighting.name.strip()
                if name:
                    canonical = _canonical(services, name)
                    services.setdefault(canonical, []).append(sighting.source)
                    if sighting.namespace:
                        placed.append((sighting.namespace, canonical))
            alerts.extend(seen.alert_names)
            keys.extend(seen.knowledge_keys)
        for name in set(self._aliases.values()) - set(services):
            services[name] = ["config"]
        prefixed = team_prefixed(services)
        for name, bare in prefixed.items():
            services[bare].extend(services.pop(name))
        namespaces: dict[str, list[str]] = {}
        for namespace, placed_name in placed:
            name = prefixed.get(placed_name, placed_name)
            if name in services:
                namespaces.setdefault(namespace, []).append(name)
        self._view = CatalogView(
            {name: tuple(dict.fromkeys(sources)) for name, sources in sorted(services.items())},
            {**prefixed, **self._aliases},
            tuple(dict.fromkeys(alerts)),
            tuple(dict.fromkeys(keys)),
            {ns: tuple(sorted(set(names))) for ns, names in sorted(namespaces.items())},
        )
        self.failures = tuple(failures)
        self._refreshed = True
        self._refreshed_at = started
        return self._view

    def start(self, interval_s: float) -> None:
        """Refreshes every `interval_s` seconds until `stop()`."""

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval_s)
                await self.refresh()

        if self._task is None and interval_s > 0:
            self._task = asyncio.create_task(loop(), name="service-catalog")

    async def stop(self) -> None:
        """Cancels the refresh loop; one stuck on a source that ignores the cancellation is left
        to end with the event loop after STOP_WAIT_S (shutdown stays bounded)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_WAIT_S)


def _canonical(services: Mapping[str, object], name: str) -> str:
    """The spelling already held for the same name in another case or with other separators."""
    wanted = normalize(name)
    return next((known for known in services if normalize(known) == wanted), name)
