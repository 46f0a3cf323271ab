"""The files source: alerts, log files and knowledge of a data directory (the tools' "fixture"
backend), a Source that fills the alert, log and knowledge ports (server/sources/ports.py).

    world.json          {"name", "description", "now"}: the reference time for relative windows (optional)
    alerts.json         [{"alert_name", "service", "state", "current", "duration", "starts_at", ...}]
    logs/               log files in any layout and format server.sources.logs reads (the bundled
                        world: NDJSON with timestamp, level, service, message, extra fields); another
                        root, field names, patterns and time zone come from a LogConfig
    knowledge/*.md      Markdown with front matter: title, keys, skill (optional: kind)
The case library comes from a CaseSource (the database). Knowledge is searched by a KnowledgeSearch:
the composition root gives the hybrid one (server/sources/retrieval/semantic_knowledge.py); without
one, the same retrieval with no embedder, which ranks by BM25 alone. File work runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evigate.server.queries.types import (
    JSON,
    CaseSource,
    KnowledgeHits,
    KnowledgeQuery,
    KnowledgeSearch,
    LogsQuery,
    MetricsQuery,
    Page,
    PatternsQuery,
    ToolError,
)
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.http import SourceHealth
from evigate.server.sources.logs import relevance as log_relevance
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.retrieval.documents import (
    DocumentError,
    Stamp,
    directory_blocks,
    directory_stamp,
    front_matter,
)
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.retrieval.factory import build_knowledge
from evigate.server.sources.retrieval.ranking import RankingConfig
from evigate.server.sources.retrieval.store import MemoryVectorStore
from evigate.server.sources.services import POD_SUFFIX, Sighting, Sightings, alert_sightings, load_aliases
from evigate.server.sources.source_set import SourceSet
from evigate.server.sources.times import display_time

ALERT_REQUIRED = ("alert_name", "service", "state")
ALIASES_FILE = "service-aliases.json"  # a world's own aliases (Chinese names, team names), optional
_ALERT_FIRST = ("alert_name", "service", "state", "current", "duration")


class FilesSource:
    """The data directory as a source of alerts, logs and knowledge."""

    name = "files"
    watched = False  # read in-process: the log index build has its own health entry

    def __init__(
        self,
        data_dir: Path,
        cases: CaseSource,
        *,
        lexical: RankingConfig | None = None,
        logs: LogConfig | None = None,
        knowledge: KnowledgeSearch | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._embedder = embedder  # query_logs' relevance mode ranks by it too (None: BM25 alone)
        self._cases = cases
        self.logs = LogFiles(logs if logs is not None else LogConfig(root=data_dir / "logs"))
        # `lexical`: how the default search (no embedder: BM25 alone) decides a match.
        self._knowledge = knowledge or build_knowledge(
            data_dir / "knowledge", None, MemoryVectorStore(), config=lexical or RankingConfig(mode="bm25")
        )
        self._alerts_stamp: tuple[int, int] | None = None
        self._alerts: list[JSON] = []
        self._now = _world_now(data_dir / "world.json")
        # The documents' front matter (`services:`, keys) for the catalog, whichever search is used.
        self._front_matter: tuple[Stamp, tuple[list[str], tuple[str, ...]]] | None = None
        self._front_lock = threading.Lock()
        self.aliases = load_aliases(data_dir / ALIASES_FILE)

    async def health(self) -> SourceHealth:
        ready = self.data_dir.is_dir()
        return SourceHealth(
            self.name, str(self.data_dir), ready, ready, detail=None if ready else "not found"
        )

    async def aclose(self) -> None:
        """Nothing to release: files are opened per read."""

    async def sightings(self) -> Sightings:
        """The services, alert names and runbook keys the alerts, the log files and the knowledge
        documents hold (the alerts read by the one alert-sighting reader, as live alerts are)."""
        try:
            alerts = await alert_sightings(self, self.now())
        except ToolError:  # each part on its own: unreadable alerts keep no one from the rest
            alerts = Sightings()
        own = await asyncio.to_thread(self._sightings)
        return Sightings(alerts.services + own.services, alerts.alert_names, own.knowledge_keys)

    def _sightings(self) -> Sightings:
        # Each part on its own: one unreadable part keeps no one from the others' names.
        found: list[Sighting] = []
        keys: tuple[str, ...] = ()
        with contextlib.suppress(ToolError):
            found.extend(Sighting(name, "log") for name in self.logs.services())
            for namespace, names in sorted(self.logs.namespaces().items()):
                found.extend(Sighting(name, "log", namespace) for name in sorted(names))
        with contextlib.suppress(DocumentError), self._front_lock:
            services, keys = self._read_front_matter()
            found.extend(Sighting(name, "knowledge") for name in services)
        return Sightings(tuple(found), (), keys)

    def _read_front_matter(self) -> tuple[list[str], tuple[str, ...]]:
        """The knowledge documents' front matter, re-read when a file changed."""
        directory = self.data_dir / "knowledge"
        stamp = directory_stamp(directory)
        if self._front_matter is None or self._front_matter[0] != stamp:
            self._front_matter = (stamp, front_matter(directory_blocks(directory)))
        return self._front_matter[1]

    def now(self) -> datetime:
        return self._now or datetime.now(UTC)

    async def query_alerts(self, query: MetricsQuery, now: datetime) -> Page:
        return await asyncio.to_thread(self._query_metrics, query)

    async def query_logs(self, query: LogsQuery) -> Page:
        if not query.query:
            return await asyncio.to_thread(self.logs.query, query)
        found = await asyncio.to_thread(self.logs.candidates, query)
        dense = await log_relevance.dense_scores(self._embedder, query.query, found.documents)
        return self.logs.ranked(found, query.query, dense, query.limit)

    async def summarize_logs(self, query: PatternsQuery) -> Page:
        return await asyncio.to_thread(self.logs.summarize, query)

    async def lookup_knowledge(self, query: KnowledgeQuery) -> KnowledgeHits:
        try:
            cases = await self._cases.list_cases()
        except Exception as exc:  # the database is a dependency: say the tool could not check
            raise ToolError(f"case library unavailable: {exc}") from exc
        return await self._knowledge.search(query, cases)

    def _query_metrics(self, q: MetricsQuery) -> Page:
        matched = []
        for alert in self._load_alerts():
            if q.service and q.service.lower() not in _services_of(alert):
                continue
            if q.alert_name and str(alert["alert_name"]).lower() != q.alert_name.lower():
                continue
            if q.state and str(alert["state"]).lower() != q.state:
                continue
            start, end = alert.get("_start"), alert.get("_end")
            if start is not None and not q.window.overlaps(start, end):
                continue
            matched.append(alert)
        matched.sort(key=lambda a: (a["state"] != "firing", -(a["_start"].timestamp() if a["_start"] else 0)))
        return Page([_shape_alert(a) for a in matched[: q.limit]], len(matched))

    def _load_alerts(self) -> list[JSON]:
        path = self.data_dir / "alerts.json"
        try:
            stat = path.stat()
            if self._alerts_stamp == (stat.st_size, stat.st_mtime_ns):
                return self._alerts
            data = json.loads(path.read_bytes())
        except OSError as exc:
            raise ToolError(f"alert data unavailable: {exc}") from exc
        except ValueError as exc:
            raise ToolError(f"corrupt alert data: alerts.json: invalid JSON ({exc})") from exc
        rows = data.get("alerts") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise ToolError('corrupt alert data: alerts.json: expected a list or {"alerts": [...]}')
        alerts = []
        for number, row in enumerate(rows):
            where = f"alerts.json item {number}"
            if not isinstance(row, dict):
                raise ToolError(f"corrupt alert data: {where}: not an object")
            missing = [k for k in ALERT_REQUIRED if not isinstance(row.get(k), str)]
            if missing:
                raise ToolError(f"corrupt alert data: {where}: missing or non-string {', '.join(missing)}")
            try:
                start = parse_timestamp(row["starts_at"]) if row.get("starts_at") else None
                end = parse_timestamp(row["ends_at"]) if row.get("ends_at") else None
            except ValueError as exc:
                raise ToolError(f"corrupt alert data: {where}: bad time ({exc})") from exc
            alerts.append({**row, "state": str(row["state"]).lower(), "_start": start, "_end": end})
        self._alerts, self._alerts_stamp = alerts, (stat.st_size, stat.st_mtime_ns)
        return alerts


def _shape_alert(alert: JSON) -> JSON:
    item: JSON = {k: alert[k] for k in _ALERT_FIRST if alert.get(k) is not None}
    for key, value in alert.items():
        if key.startswith("_") or key in item or value is None:
            continue
        if key in ("starts_at", "ends_at"):
            item[key] = display_time(alert["_start"] if key == "starts_at" else alert["_end"])
        else:
            item[key] = value
    return item


def parse_timestamp(value: Any) -> datetime:
    """ISO 8601 text; without a zone it is UTC."""
    if not isinstance(value, str):
        raise ValueError(f"timestamp must be a string, got {type(value).__name__}")
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _world_now(path: Path) -> datetime | None:
    if not path.exists():
        return None
    try:
        world = json.loads(path.read_text(encoding="utf-8"))
        return parse_timestamp(world["now"]) if isinstance(world, dict) and world.get("now") else None
    except (OSError, ValueError, KeyError) as exc:
        raise ToolError(f"world.json unreadable: {exc}") from exc


def files_source_set(files: FilesSource) -> SourceSet:
    """The set of the files alone: its alerts, logs and knowledge; "now" the world's reference time."""
    return SourceSet(
        sources=(files,),
        alerts=(files,),
        logs=(files,),
        knowledge=(files,),
        clock=files.now,
        aliases=files.aliases,
    )


def _services_of(alert: Mapping[str, Any]) -> set[str]:
    """The alert's own service, and the workload its `pod` label belongs to (its hash suffixes
    stripped): an alert about a pod of X is about X, whatever service its rule labelled it with."""
    found = {str(alert["service"]).lower()}
    labels = alert.get("labels")
    pod = labels.get("pod") if isinstance(labels, Mapping) else None
    if isinstance(pod, str) and POD_SUFFIX.search(pod):
        found.add(POD_SUFFIX.sub("", pod).lower())
    return found
