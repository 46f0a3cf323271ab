"""Trace viewer benchmark: the session page of a 300-tool-call session, some results a megabyte.

The session is made by the real pipeline (offline agents, the fixture tools over a copy of the demo
world with one extra service whose log lines are long, SQLite); the Executor is the offline one
preceded by N real tool calls. Prints the page's size and render time: the presenter + template
alone, and a whole HTTP GET through the served viewer (uvicorn in the service's loop).

    python bench/bench_web.py [--calls 300] [--large 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.agents.base import ExecutorOutput, ExecutorTask
from evigate.server.agents.offline import build_offline_backend
from evigate.server.app import App, Components
from evigate.server.deadline import Deadline
from evigate.server.settings import Settings
from evigate.server.web import views
from evigate.server.web.routes import environment

DEMO = Path(__file__).resolve().parents[1] / "server" / "demo"
BIG_SERVICE = "bulk-service"
QUESTION = "Any ERROR logs with OutOfMemoryError on user-service?"


def world(directory: Path, line_chars: int) -> Path:
    target = directory / "world"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    with (target / "logs" / f"{BIG_SERVICE}.ndjson").open("w", encoding="utf-8") as handle:
        for i in range(200):
            line = {
                "timestamp": f"2026-07-08T22:{i // 60:02d}:{i % 60:02d}Z",
                "level": "ERROR",
                "service": BIG_SERVICE,
                "message": f"batch {i} failed: " + "x" * line_chars,
            }
            handle.write(json.dumps(line) + "\n")
    return target


class ManyCalls:
    def __init__(self, calls: int, large: int) -> None:
        self._inner = build_offline_backend().executor
        self._calls = calls
        self._large = large

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        if task.round == 1:
            for i in range(self._calls):
                if i < self._large:  # 200 long lines: about a megabyte of result
                    args = {"service": BIG_SERVICE, "limit": 200, "pattern": f"failed: x{{{i + 1}}}"}
                else:
                    args = {"service": "user-service", "keyword": f"uid=U{i:06d}"}
                await task.tools.call("query_logs", args, task.deadline)
        return await self._inner.execute(task)


async def main(calls: int, large: int, repeat: int) -> list[figures.Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        agents = dataclasses.replace(build_offline_backend(), executor=ManyCalls(calls, large))
        settings = Settings.of(
            listen="127.0.0.1:0",
            state_dir=directory / "state",
            data_dir=world(directory, 5000),
            web="127.0.0.1:0",
            log_format="text",
            log_level="WARNING",
        )
        app = App(settings, Components(agents=agents))
        await app.start()
        try:
            assert app.pipeline is not None and app.database is not None and app.web is not None
            await app.pipeline.run(QUESTION, "bench-web", "en", Deadline.after(300))
            record = await app.database.repo.get_trace("bench-web")
            assert record is not None
            stored = sum(len(json.dumps(i.raw_result)) for i in record.invocations)
            template = environment().get_template("session.html")
            renders = []
            html = ""
            for _ in range(repeat):
                started = time.perf_counter()
                page = views.session_page(record)
                html = template.render(page=page, csrf="x", auth_enabled=False, path="/", notice="")
                renders.append(time.perf_counter() - started)
            gets = []
            async with httpx.AsyncClient(base_url=app.web.url, timeout=60) as client:
                for _ in range(repeat):
                    started = time.perf_counter()
                    response = await client.get("/sessions/bench-web")
                    gets.append(time.perf_counter() - started)
                    response.raise_for_status()
            print(f"session: {len(record.invocations)} tool calls, results {stored / 1e6:.1f} MB stored")
            print(f"page: {len(html) / 1e6:.2f} MB of HTML")
            found = [figures.Figure("HTML of the session page", f"{len(html) / 1e6:.2f} MB")]
            for name, times in (("presenter + template", renders), ("HTTP GET (read + render)", gets)):
                p50, worst = statistics.median(times) * 1000, max(times) * 1000
                print(f"{name}: p50 {p50:.0f} ms, max {worst:.0f} ms")
                found.append(
                    figures.Figure(f"{name}, p50 / max", f"{p50:.0f} / {worst:.0f} ms", cache="warm")
                )
            return found
        finally:
            await app.stop(grace=0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--large", type=int, default=10, help="calls whose result is about a megabyte")
    parser.add_argument("--repeat", type=int, default=5)
    figures.add_json_flag(parser)
    options = parser.parse_args()
    found = asyncio.run(main(options.calls, options.large, options.repeat))
    what = f"the trace viewer's page of a {options.calls}-tool-call session, {options.large} results of ~1 MB"
    figures.write(options.json, "bench_web", what, found)
