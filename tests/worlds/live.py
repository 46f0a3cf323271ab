"""A world whose alerts and metrics are live: a real VictoriaMetrics and Alertmanager on free loopback
ports with temporary storage, loaded from the world's `live/` folder, and the service composed over
them as `evigate serve --data-dir <world> --prometheus-url … --alertmanager-url …` composes itself
(files for logs and knowledge with the default hybrid knowledge search, the service catalog fed by
the live sources, the offline agents with the signal catalog), read at the world's reference time.

    live/series.jsonl   VictoriaMetrics /api/v1/import JSON lines (ALERTS history included)
    live/alerts.json    {"alerts": [{"labels", "annotations", "starts", "ends", "silence"?}]}:
                        those with ends null fire at the reference time and go to Alertmanager
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import httpx

from evigate.server.agents.base import AgentBackend
from evigate.server.agents.offline import build_offline_backend
from evigate.server.pipeline import Pipeline
from evigate.server.pipeline.orchestrator import PipelineSettings
from evigate.server.settings import Settings
from evigate.server.skills import load_skills
from evigate.server.sources.kinds import add_live_sources
from evigate.server.sources.services import ServiceCatalog
from evigate.server.sources.signals import SignalCatalog
from evigate.server.sources.signals import load_signal_catalog as load_signals
from evigate.server.sources.sources_config import SourcesConfig, SourceSettings
from evigate.server.tool_sources import build_knowledge_search, build_names_embedder
from evigate.server.tools import build_backend
from evigate.server.tools.registry import default_registry
from evigate.server.tools.service_catalog_setup import open_service_catalog
from evigate.storage import Database
from tests.sources.servers import Server, free_port, start_alertmanager, start_victoria_metrics, wait_for

SOURCES = ("alertmanager", "prometheus")
# Alerts stay active in Alertmanager this long after they are posted: longer than any run.
ACTIVE_FOR = timedelta(days=1)


@dataclass
class LiveSources:
    victoria: Server
    alertmanager: Server

    def stop(self) -> None:
        self.victoria.stop()
        self.alertmanager.stop()


def start_live_sources(world: Path, workdir: Path) -> LiveSources:
    """Both servers started and loaded: every series searchable, every firing alert active."""
    alertmanager = start_alertmanager(workdir / "alertmanager")
    try:
        victoria = start_victoria_metrics(workdir / "victoria", None, retention="100y")
    except BaseException:
        alertmanager.stop()
        raise
    sources = LiveSources(victoria, alertmanager)
    try:
        _load_series(victoria, world / "live" / "series.jsonl", _reference(world))
        _load_alerts(alertmanager, world / "live" / "alerts.json", _reference(world))
    except BaseException:
        sources.stop()
        raise
    return sources


def _reference(world: Path) -> datetime:
    now: str = json.loads((world / "world.json").read_text(encoding="utf-8"))["now"]
    return datetime.fromisoformat(now)


def _load_series(victoria: Server, path: Path, reference: datetime) -> None:
    body = path.read_bytes()
    httpx.post(f"{victoria.url}/api/v1/import", content=body, timeout=30).raise_for_status()
    expected = body.count(b"\n")
    window = {"start": str((reference - timedelta(days=1)).timestamp()), "end": str(reference.timestamp())}

    def searchable() -> bool:
        httpx.get(f"{victoria.url}/internal/force_flush", timeout=5).raise_for_status()
        params = {"match[]": '{__name__=~".+"}', **window}
        found = httpx.get(f"{victoria.url}/api/v1/series", params=params, timeout=5).json()["data"]
        return len(found) == expected

    wait_for(searchable, 30, f"the {expected} series of {path.name} in VictoriaMetrics", victoria.log)


def _load_alerts(alertmanager: Server, path: Path, reference: datetime) -> None:
    firing = [a for a in json.loads(path.read_text(encoding="utf-8"))["alerts"] if a["ends"] is None]
    wall = datetime.now(UTC)
    ends = (wall + ACTIVE_FOR).isoformat()

    def started(hhmmss: str) -> str:  # a time of the reference day, as the data writes it
        return datetime.combine(reference.date(), time.fromisoformat(hhmmss), UTC).isoformat()

    api = f"{alertmanager.url}/api/v2"
    postable = [
        {
            "labels": a["labels"],
            "annotations": a["annotations"],
            "startsAt": started(a["starts"]),
            "endsAt": ends,
        }
        for a in firing
    ]
    httpx.post(f"{api}/alerts", json=postable, timeout=10).raise_for_status()
    muted = [a for a in firing if a.get("silence")]
    for alert in muted:
        matchers = [
            {"name": k, "value": v, "isRegex": False, "isEqual": True} for k, v in alert["labels"].items()
        ]
        silence = {
            "matchers": matchers,
            "startsAt": wall.isoformat(),
            "endsAt": ends,
            "createdBy": "kestrel-oncall",
            "comment": alert["silence"],
        }
        httpx.post(f"{api}/silences", json=silence, timeout=10).raise_for_status()

    def active() -> bool:
        states = [a["status"]["state"] for a in httpx.get(f"{api}/alerts", timeout=5).json()]
        return len(states) == len(firing) and states.count("suppressed") == len(muted)

    wait_for(active, 30, f"the {len(firing)} firing alerts of {path.name} in Alertmanager", alertmanager.log)


def closed_url() -> str:
    """A loopback URL where nothing listens: a source that is down."""
    return f"http://127.0.0.1:{free_port()}"


def offline_agents(services: ServiceCatalog | None, signals: SignalCatalog | None) -> AgentBackend:
    """The offline agents over a world's service and signal catalogs, as `evigate serve` builds them."""
    return build_offline_backend(catalog=services, signals=signals)


# Who answers a world's questions, built over its service and signal catalogs.
AgentsFor = Callable[[ServiceCatalog | None, SignalCatalog | None], AgentBackend]


@asynccontextmanager
async def live_pipeline(
    world: Path,
    db: Database,
    sources: LiveSources,
    workdir: Path,
    down: Collection[str] = (),
    *,
    agents: AgentsFor = offline_agents,
) -> AsyncIterator[Pipeline]:
    """The service over `world`'s files and the live `sources` (those named in `down` unreachable),
    at the world's reference time, answered by the offline agents or those `agents` builds."""
    unknown = set(down) - set(SOURCES)
    assert not unknown, f"unknown sources {unknown}; known: {SOURCES}"
    settings = Settings.of(
        data_dir=world, vector_cache=workdir / "vectors.sqlite3", state_dir=workdir / "state"
    )
    knowledge, cache = build_knowledge_search(settings, db)
    files = build_backend(world, db.repo, knowledge=knowledge)
    await knowledge.refresh_files()
    urls = {"alertmanager": sources.alertmanager.url, "prometheus": sources.victoria.url}
    urls.update({name: closed_url() for name in down})
    config = SourcesConfig(
        prometheus=SourceSettings(name="prometheus", url=urls["prometheus"]),
        alertmanager=SourceSettings(name="alertmanager", url=urls["alertmanager"]),
    )
    tools = add_live_sources(files, config, load_signals(), reference=files.now())
    services = await open_service_catalog(tools, None, 3600, build_names_embedder(settings))
    signals = tools.signals
    pipeline = Pipeline(
        db.repo,
        tools,
        agents(services, signals),
        load_skills(),
        default_registry().catalog(),
        PipelineSettings(owner="worlds"),
    )
    try:
        yield pipeline
    finally:
        await pipeline.aclose()
        if services is not None:
            await services.stop()
        await tools.aclose()
        cache.close()
