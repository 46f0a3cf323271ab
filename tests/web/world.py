"""A served evigate (gRPC + the web viewer) in a thread of its own, with sessions made by the real
pipeline: the offline agents over a copy of the demo world, through the real tools and storage.

The Executor is the offline one wrapped so that a test can ask, per question, for rounds whose
citation is forged (the Gatekeeper rejects them: a REJECT round and its retry), for a number of
extra real tool calls before the evidence is written, or for the Executor to fail (a FAILED
session). The demo world's copy has one log line carrying an XSS payload."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from evigate.server.agents.base import ExecutorOutput, ExecutorTask, StageOutput
from evigate.server.agents.offline import build_offline_backend
from evigate.server.app import App, Components
from evigate.server.deadline import Deadline
from evigate.server.pipeline import ChatResult
from evigate.storage.records import TraceRecord
from tests.server.conftest import make_settings
from tests.support.waiting import until

DEMO_DIR = Path(__file__).resolve().parents[2] / "server" / "demo"
XSS_SERVICE = "user-service"
XSS_MESSAGE = (
    'java.lang.OutOfMemoryError: <script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'
)
T = TypeVar("T")
JSON = dict[str, Any]


def world_with_payload(directory: Path) -> Path:
    """A copy of the demo world whose newest user-service log line carries script and an onerror."""
    world = directory / "world"
    shutil.copytree(DEMO_DIR, world, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    line = {
        "timestamp": "2026-07-08T23:30:00Z",
        "level": "ERROR",
        "service": XSS_SERVICE,
        "message": XSS_MESSAGE,
        "logger": "com.shop.user.session.SessionCache",
        "thread": "http-nio-8080-exec-7",
        "trace_id": "0badc0de0badc0de",
        "exception": "java.lang.OutOfMemoryError",
    }
    with (world / "logs" / f"{XSS_SERVICE}.ndjson").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return world


class ScriptedExecutor:
    def __init__(self) -> None:
        self._inner = build_offline_backend().executor
        self.forged_rounds: dict[str, set[int]] = {}
        self.extra_calls: dict[str, int] = {}
        self.failing: set[str] = set()

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        if task.query in self.failing:
            raise RuntimeError("executor backend down")
        for index in range(self.extra_calls.get(task.query, 0)):
            # Real, recorded calls with distinct arguments (identical repeats would be deduped).
            await task.tools.call(
                "query_logs", {"service": XSS_SERVICE, "keyword": f"uid=U{index:06d}"}, task.deadline
            )
        output = await self._inner.execute(task)
        if task.round in self.forged_rounds.get(task.query, set()):
            # Cites an invocation id the session does not have: citation.invocation_exists rejects it.
            forged = output.raw_text.replace('"source_invocation_id": ', '"source_invocation_id": 9', 1)
            output = dataclasses.replace(output, raw_text=forged)
        return output


class ScriptedComposer:
    """The offline Composer, except that its first answer to a question in `lying` adds a sentence
    with an invented number and ticket: the answer check refuses it and the Composer is asked
    again."""

    def __init__(self) -> None:
        self._inner = build_offline_backend().composer
        self.lying: set[str] = set()
        self.lie = "CPU is at 99%, see ticket OPS-4711."

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        output = await self._inner.compose(composer_input, deadline)
        query = composer_input.get("original_query")
        if query not in self.lying:
            return output
        self.lying.discard(query)  # only the first attempt lies
        data = dict(output.data)
        bound = next(x["claim_ids"] for x in data["sentences"] if x["claim_ids"])
        lie = {
            "kind": "finding",
            "text": self.lie,
            "claim_ids": bound,
            "hypothesis_ids": [],
            "fixed_line": "",
        }
        data["sentences"] = [*data["sentences"], lie]
        return dataclasses.replace(output, data=data)


class ViewerWorld:
    def __init__(self, directory: Path, tokens: tuple[str, ...] = ()) -> None:
        self.executor = ScriptedExecutor()
        self.composer = ScriptedComposer()
        agents = dataclasses.replace(build_offline_backend(), executor=self.executor, composer=self.composer)
        settings = make_settings(
            directory,
            web="127.0.0.1:0",
            auth_tokens=tokens,
            data_dir=world_with_payload(directory),
            worker_poll_interval_s=0.05,
        )
        self.app = App(settings, Components(agents=agents))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="viewer-world", daemon=True)
        self._thread.start()
        self.run(self.app.start())
        assert self.app.web is not None
        self.url = self.app.web.url.rstrip("/")

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout)

    def ask(self, query: str, session_id: str, language: str = "zh") -> ChatResult:
        assert self.app.pipeline is not None
        return self.run(self.app.pipeline.run(query, session_id, language, Deadline.after(60)))

    def trace(self, session_id: str) -> TraceRecord:
        assert self.app.database is not None
        record = self.run(self.app.database.repo.get_trace(session_id))
        assert record is not None
        return record

    def scored(self, session_id: str) -> TraceRecord:
        """The trace once the evaluation worker has written its evidence score."""
        until(
            lambda: (self.trace(session_id).session.self_evaluation or {}).get("evidence_score") is not None,
            within=20,
            what=f"session {session_id} scored",
        )
        return self.trace(session_id)

    def close(self) -> None:
        try:
            self.run(self.app.stop(grace=0))
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()
