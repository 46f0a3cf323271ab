"""The cases ported from HolmesGPT's evaluation suite (tests/peer/README.md), run through the service
as `evigate serve` would run them, with the offline agents, and judged by tests/worlds/judge.py.

Each case directory holds `case.json` (the peer's prompt and rubric, our questions and their
code-judged expectations), `world/` (a --data-dir: world.json, logs/, knowledge/, alerts.json and,
for metrics, `metrics.jsonl` in VictoriaMetrics' JSON-line import format) and, for the Kubernetes
group, `kube-dump/` (a `kubectl cluster-info dump` tree).

A case with metrics gets its own VictoriaMetrics, its series shifted so that the world's `now` is
the wall clock (live sources answer about now), and the service is pointed at it. A Kubernetes case
runs only when the service has a cluster source: the settings name it `kube_dump`, and the case's
dump is passed as that setting. Until then it is reported, unrun, as "no cluster source configured".
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from evigate.server.app import App, Components
from evigate.server.deadline import Deadline
from evigate.server.settings import Settings, setting_fields
from tests.sources.servers import start_victoria_metrics
from tests.support.waiting import until
from tests.worlds.judge import Judgement, Question, judge, question, reasons

PEER = Path(__file__).resolve().parent
CASES = PEER / "holmes"
GROUPS = ("logs", "kubernetes")
NO_CLUSTER = "no cluster source configured"
CLUSTER_SETTING = "kube_dump"


@dataclass(frozen=True)
class PeerCase:
    id: str
    group: str
    directory: Path
    questions: tuple[Question, ...]
    not_judged: tuple[str, ...]

    @property
    def world(self) -> Path:
        return self.directory / "world"

    @property
    def kube_dump(self) -> Path | None:
        dump = self.directory / "kube-dump"
        return dump if dump.is_dir() else None

    @property
    def metrics(self) -> Path | None:
        series = self.world / "metrics.jsonl"
        return series if series.is_file() else None


@dataclass
class CaseResult:
    case: PeerCase
    judgements: list[Judgement] = field(default_factory=list)
    not_run: str | None = None

    @property
    def right(self) -> int:
        return sum(j.correct for j in self.judgements)

    @property
    def correct(self) -> bool:
        return self.not_run is None and self.right == len(self.case.questions)


def load_cases(group: str | None = None) -> list[PeerCase]:
    out = []
    for path in sorted(CASES.glob("*/case.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if group is not None and data["group"] != group:
            continue
        out.append(
            PeerCase(
                id=data["id"],
                group=data["group"],
                directory=path.parent,
                questions=tuple(question(q) for q in data["questions"]),
                not_judged=tuple(data.get("not_judged", ())),
            )
        )
    return out


def cluster_source_available() -> bool:
    """Whether the service has a setting for a cluster dump to read."""
    return CLUSTER_SETTING in setting_fields()


def world_now(world: Path) -> datetime:
    now = json.loads((world / "world.json").read_text(encoding="utf-8"))["now"]
    return datetime.fromisoformat(now).astimezone(UTC)


def shifted_series(path: Path, shift_ms: int) -> bytes:
    """The import file's lines with every timestamp moved by `shift_ms`."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        series = json.loads(line)
        series["timestamps"] = [t + shift_ms for t in series["timestamps"]]
        lines.append(json.dumps(series, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode()


@contextmanager
def victoria_metrics(series: Path, workdir: Path) -> Iterator[str]:
    """A VictoriaMetrics holding `series`, moved so that the world's now is now; yields its URL."""
    server = start_victoria_metrics(workdir, None)
    try:
        shift = datetime.now(UTC) - world_now(series.parent)
        body = shifted_series(series, int(shift.total_seconds() * 1000))
        expected = body.count(b"\n")
        with httpx.Client(base_url=server.url, timeout=30) as client:
            client.post("/api/v1/import", content=body).raise_for_status()
            client.get("/internal/force_flush").raise_for_status()

            def searchable() -> bool:
                # the series of the last day: the import's window, shifted to end now
                found = client.get("/api/v1/series", params={"match[]": '{__name__!=""}', "start": "-1d"})
                return found.status_code == 200 and len(found.json()["data"]) >= expected

            until(searchable, within=30, what=f"{expected} imported series searchable")
        yield server.url
    finally:
        server.stop()


def settings_for(case: PeerCase, workdir: Path, prometheus_url: str = "", **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "listen": "127.0.0.1:0",
        "state_dir": workdir / "state",
        "data_dir": case.world,
        "prometheus_url": prometheus_url,
        "log_format": "text",
        "log_level": "WARNING",
        "worker_enabled": False,
        "vector_cache": workdir.parent / "vectors.sqlite3",
    }
    if case.kube_dump is not None and cluster_source_available():
        values[CLUSTER_SETTING] = case.kube_dump
    values.update(overrides)
    return Settings.of(**values)


async def run_case(case: PeerCase, workdir: Path, **overrides: Any) -> CaseResult:
    """Every question of `case`, asked of a service started on its world, judged by code."""
    if case.group == "kubernetes" and not cluster_source_available():
        return CaseResult(case, not_run=NO_CLUSTER)
    if case.metrics is None:
        return await _ask_all(case, settings_for(case, workdir, **overrides))
    with victoria_metrics(case.metrics, workdir / "victoria") as url:
        return await _ask_all(case, settings_for(case, workdir, url, **overrides))


async def _ask_all(case: PeerCase, settings: Settings) -> CaseResult:
    app = App(settings, Components())
    await app.start()
    try:
        assert app.pipeline is not None and app.database is not None
        result = CaseResult(case)
        for q in case.questions:
            chat = await app.pipeline.run(q.query, None, q.language, Deadline.after(120))
            trace = await app.database.repo.get_trace(chat.session_id)
            result.judgements.append(judge(q, chat, trace.invocations if trace is not None else []))
        return result
    finally:
        await app.stop(grace=0)


def report(results: Sequence[CaseResult]) -> str:
    """Per case: questions right / asked, and each miss's reasons; per group: cases and questions."""
    lines = []
    for group in GROUPS:
        members = [r for r in results if r.case.group == group]
        if not members:
            continue
        asked = sum(len(r.case.questions) for r in members)
        right = sum(r.right for r in members)
        cases = sum(r.correct for r in members)
        lines.append(f"group {group}: {cases}/{len(members)} cases, {right}/{asked} questions correct")
        for r in members:
            if r.not_run is not None:
                lines.append(f"  {r.case.id:<44} 0/{len(r.case.questions)}  not run: {r.not_run}")
                continue
            mark = "right" if r.correct else "wrong"
            lines.append(f"  {r.case.id:<44} {r.right}/{len(r.case.questions)}  {mark}")
            for j in r.judgements:
                if not j.correct:
                    lines.append(f"      {j.question.id}: {'; '.join(reasons(j))}")
        ran = [j for r in members for j in r.judgements]
        lines.append(
            f"  unsupported facts: {sum(len(j.unsupported) for j in ran)}, "
            f"over-statements: {sum(j.overstated for j in ran)}, "
            f"could-not-check reported as nothing: {sum(j.unchecked_as_nothing for j in ran)}"
        )
    if len({r.case.group for r in results}) > 1:
        lines.append(
            f"total: {sum(r.correct for r in results)}/{len(results)} cases, "
            f"{sum(r.right for r in results)}/{sum(len(r.case.questions) for r in results)} questions correct"
        )
    return "\n".join(lines)
