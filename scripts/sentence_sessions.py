"""Regenerate the real sessions the sentence check's corpus is written over
(tests/golden/sentence_check/sessions/<world>.json).

Every labelled question of the demo world and of tidewater (tests/worlds/) is asked through the
offline pipeline on its data; each session with an allowed claim is stored as the sentence check's
material (its allowed claims with their verified excerpts, ref texts and tools, its hypotheses, the
catalog's names, the question and the language). A third set asks the demo's survey questions with a
Prometheus configured at a closed port, so that real calls fail and their errors become
could-not-check claims.

    .venv/bin/python scripts/sentence_sessions.py
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evigate.rules.sentence_material import build  # noqa: E402
from evigate.rules.sentence_types import material_to_seed  # noqa: E402
from evigate.rules.types import InvocationFacts  # noqa: E402
from evigate.server.agents.offline import build_offline_backend  # noqa: E402
from evigate.server.deadline import Deadline  # noqa: E402
from evigate.server.pipeline import Pipeline, material  # noqa: E402
from evigate.server.pipeline.orchestrator import PipelineSettings  # noqa: E402
from evigate.server.skills import load_skills  # noqa: E402
from evigate.server.sources.kinds import add_live_sources  # noqa: E402
from evigate.server.sources.signals import load_signal_catalog as load_signals  # noqa: E402
from evigate.server.sources.sources_config import SourcesConfig, SourceSettings  # noqa: E402
from evigate.server.tools import build_backend  # noqa: E402
from evigate.server.tools.registry import default_registry  # noqa: E402
from evigate.storage import Database  # noqa: E402
from tests.worlds.judge import DATA_DIRS, Question, questions  # noqa: E402

OUT = ROOT / "tests" / "golden" / "sentence_check" / "sessions"


def _arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{key}={value}" for key, value in arguments.items())


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _sessions(world: str, asked: list[Question], db: Database, failing: bool) -> dict[str, Any]:
    files = build_backend(DATA_DIRS[world], db.repo)
    signals = load_signals() if failing else None
    tools = files
    if failing:
        url = f"http://127.0.0.1:{_closed_port()}"
        tools = add_live_sources(files, SourcesConfig(prometheus=SourceSettings("prometheus", url)), signals)
    agents = build_offline_backend(catalog=files.services, signals=signals)
    pipeline = Pipeline(
        db.repo,
        tools,
        agents,
        load_skills(),
        default_registry().catalog(),
        PipelineSettings(owner="fixtures"),
    )
    view = await files.services.ensure()
    out: dict[str, Any] = {}
    try:
        for question in asked:
            result = await pipeline.run(question.query, None, question.language, Deadline.after(60))
            trace = await db.repo.get_trace(result.session_id)
            if trace is None or not trace.rounds:
                continue
            last = trace.rounds[-1]
            composer_input = material.composer_input(
                question.query, question.language, last.executor_output or {}, last.gatekeeper_result or {},
                last.verdict or {},
            )  # fmt: skip
            invocations = [
                InvocationFacts.from_seed(i.id, i.tool_name, i.retrieval_details) for i in trace.invocations
            ]
            failed = {
                i.id: f"{i.tool_name}({_arguments(i.arguments)}) failed ({i.error})"
                for i in trace.invocations
                if i.status != "success"
            }
            built = build(
                composer_input,
                last.gatekeeper_result or {},
                invocations,
                failed_calls=failed,
                catalog=view.names,
                aliases=view.aliases,
            )
            if built.claims:
                out[question.id] = {"answer_today": result.answer, **material_to_seed(built)}
    finally:
        await pipeline.aclose()
    return out


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    sets = [("demo", False), ("tidewater", False), ("demo", True)]
    for world, failing in sets:
        asked = questions(world)
        if failing:
            asked = [q for q in asked if q.family in ("survey", "paraphrase")]
        with tempfile.TemporaryDirectory() as tmp:
            db = await Database.open(f"sqlite+aiosqlite:///{Path(tmp) / 'sessions.db'}", pool_size=5)
            try:
                sessions = await _sessions(world, asked, db, failing)
            finally:
                await db.close()
        name = f"{world}-failing" if failing else world
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(sessions, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{path.relative_to(ROOT)}: {len(sessions)} sessions")


if __name__ == "__main__":
    asyncio.run(main())
