"""A session the database became unreachable for is recorded FAILED once the database answers
again, whichever write failed: the session's INSERT (whose commit may have landed all the same),
a stage's write, or the FAILED row of a cancelled or timed-out session. On SQLite and MariaDB."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from evigate.server.agents.base import ExecutorOutput, ExecutorTask
from evigate.server.agents.offline import build_offline_backend
from evigate.server.deadline import Deadline
from evigate.server.pipeline import Pipeline, lifecycle
from evigate.server.pipeline.orchestrator import PipelineSettings
from evigate.server.skills import load_skills
from evigate.server.tools import build_backend
from evigate.server.tools.registry import default_registry
from evigate.storage import Database, DatabaseUnavailable, Repository

HIGH_CPU = "payment-service 现在有 HighCPUUsage 告警吗？"


class FlakyRepository:
    """The real repository, except that the methods named in `failures` raise DatabaseUnavailable
    that many times; `after_commit` methods run for real first (the reply was lost, not the write)."""

    def __init__(self, repo: Repository, failures: dict[str, int], after_commit: frozenset[str]) -> None:
        self._repo = repo
        self._failures = dict(failures)
        self._after_commit = after_commit

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._repo, name)
        if not self._failures.get(name):
            return real

        async def flaky(*args: Any, **kwargs: Any) -> Any:
            if self._failures.get(name):
                self._failures[name] -= 1
                if name in self._after_commit:
                    await real(*args, **kwargs)
                raise DatabaseUnavailable(f"database unreachable: {name}")
            return await real(*args, **kwargs)

        return flaky


class _Stuck:
    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        self.started.set()
        await asyncio.Event().wait()  # until cancelled
        raise AssertionError("not reached")


@pytest.fixture(autouse=True)
def _retry_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "RECOVERY_FIRST_DELAY_S", 0.0)


def _pipeline(repo: Any, executor: Any = None) -> Pipeline:
    agents = build_offline_backend()
    if executor is not None:
        agents = dataclasses.replace(agents, executor=executor)
    return Pipeline(
        repo,
        build_backend(None, repo),
        agents,
        load_skills(),
        default_registry().catalog(),
        PipelineSettings(max_rounds=2, owner="tests"),
    )


async def _recovered(pipeline: Pipeline) -> None:
    """Waits for the background recoveries the pipeline started (they end once they wrote)."""
    await pipeline.recovered()


async def test_an_insert_whose_reply_was_lost_is_failed_once_reachable(db: Database) -> None:
    flaky = FlakyRepository(db.repo, {"create_session": 1}, frozenset({"create_session"}))
    pipeline = _pipeline(flaky)
    with pytest.raises(DatabaseUnavailable):
        await pipeline.run(HIGH_CPU, "lost-insert", "zh", Deadline.after(30))
    await _recovered(pipeline)
    session = await db.repo.get_session("lost-insert")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason == "the database became unreachable while the session was created"


async def test_an_insert_that_never_landed_leaves_nothing(db: Database) -> None:
    flaky = FlakyRepository(db.repo, {"create_session": 1}, frozenset())
    pipeline = _pipeline(flaky)
    with pytest.raises(DatabaseUnavailable):
        await pipeline.run(HIGH_CPU, "no-insert", "zh", Deadline.after(30))
    await _recovered(pipeline)
    assert await db.repo.get_session("no-insert") is None


async def test_a_cancelled_session_whose_failed_row_could_not_be_written(db: Database) -> None:
    stuck = _Stuck()
    flaky = FlakyRepository(db.repo, {"finish_failed": 1}, frozenset())
    pipeline = _pipeline(flaky, executor=stuck)
    task = asyncio.create_task(pipeline.run(HIGH_CPU, "cancelled-down", "zh", Deadline.after(30)))
    await asyncio.wait_for(stuck.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _recovered(pipeline)
    session = await db.repo.get_session("cancelled-down")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason == "cancelled during executor (round 1)"


async def test_a_timed_out_session_whose_failed_row_could_not_be_written(db: Database) -> None:
    stuck = _Stuck()
    flaky = FlakyRepository(db.repo, {"finish_failed": 1}, frozenset())
    pipeline = _pipeline(flaky, executor=stuck)
    with pytest.raises(DatabaseUnavailable):
        await pipeline.run(HIGH_CPU, "timed-out-down", "zh", Deadline.after(0.5))
    await _recovered(pipeline)
    session = await db.repo.get_session("timed-out-down")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason is not None and session.failure_reason.startswith("deadline exceeded")


async def test_the_recovery_keeps_trying_through_unexpected_errors(db: Database) -> None:
    """get_session failing with something other than DatabaseUnavailable (a connection the outage
    broke) does not end the recovery."""
    flaky = FlakyRepository(db.repo, {"finish_success": 1}, frozenset())
    pipeline = _pipeline(flaky)
    original = db.repo.get_session
    calls = {"n": 0}

    async def broken_then_fine(session_id: str) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("commands out of sync")
        return await original(session_id)

    with pytest.raises(DatabaseUnavailable):
        await pipeline.run(HIGH_CPU, "stage-down", "zh", Deadline.after(30))
    db.repo.get_session = broken_then_fine  # type: ignore[method-assign]
    try:
        await _recovered(pipeline)
    finally:
        db.repo.get_session = original  # type: ignore[method-assign]
    assert calls["n"] >= 2
    session = await db.repo.get_session("stage-down")
    assert session is not None and session.status == "FAILED"
    assert session.failure_reason is not None and "unreachable" in session.failure_reason
