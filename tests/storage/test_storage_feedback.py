"""Feedback and the case library (docs/design.md §7), on SQLite and MariaDB."""

from __future__ import annotations

import asyncio
import multiprocessing
import uuid
from concurrent.futures import ProcessPoolExecutor

import pytest
from sqlalchemy import func, select

from evigate.storage import Database, NoAnswer, SessionNotFound
from evigate.storage.rows import CASE
from tests.storage.storage_helpers import finished_session, useful_feedback_worker


async def _case_count(db: Database) -> int:
    async with db.engine.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(CASE))).scalar_one())


async def test_useful_creates_one_case_with_the_documented_fields(db: Database) -> None:
    query = "订单服务 HikariCP 连接池是否耗尽？" * 10 + "😀"
    await finished_session(db, "s", query)
    first = await db.repo.submit_feedback("s", "useful")
    again = await db.repo.submit_feedback("s", "useful")
    assert first.created and not again.created
    assert first.case_id == again.case_id
    assert str(uuid.UUID(first.case_id or "")) == first.case_id
    (case,) = await db.repo.list_cases()
    assert case.case_id == first.case_id
    assert case.diagnosis_id == "s"
    assert (case.source_type, case.fault_category, case.created_by) == ("AUTO", "GENERAL", "system")
    assert case.title == query[:100]
    assert case.root_cause == case.solution == "答案 for s"
    session = await db.repo.get_session("s")
    assert session is not None
    assert (session.feedback, session.status) == ("useful", "SUCCESS")


async def test_not_useful_sets_feedback_only(db: Database) -> None:
    await finished_session(db, "s")
    await db.repo.create_session("r", "q", "zh", "o")
    assert (await db.repo.submit_feedback("s", "not_useful")).case_id is None
    assert (await db.repo.submit_feedback("r", "not_useful")).case_id is None
    for sid, status in (("s", "SUCCESS"), ("r", "RUNNING")):
        session = await db.repo.get_session(sid)
        assert session is not None
        assert (session.feedback, session.status) == ("not_useful", status)
    assert await _case_count(db) == 0
    bad, _ = await db.repo.list_sessions("not_useful", None, 10, None)
    assert {s.session_id for s in bad} == {"s", "r"}


@pytest.mark.parametrize("value", ["USEFUL", "", "bad_case", "useful "])
async def test_other_values_are_rejected(db: Database, value: str) -> None:
    await finished_session(db, "s")
    with pytest.raises(ValueError, match="feedback must be one of"):
        await db.repo.submit_feedback("s", value)


async def test_unknown_session_and_missing_answer(db: Database) -> None:
    with pytest.raises(SessionNotFound):
        await db.repo.submit_feedback("nope", "useful")
    with pytest.raises(SessionNotFound):
        await db.repo.submit_feedback("nope", "not_useful")
    await db.repo.create_session("running", "q", "zh", "o")
    with pytest.raises(NoAnswer):
        await db.repo.submit_feedback("running", "useful")
    session = await db.repo.get_session("running")
    assert session is not None and session.feedback is None
    assert await _case_count(db) == 0


async def test_concurrent_useful_in_one_process(db: Database) -> None:
    await finished_session(db, "s")
    outcomes = await asyncio.gather(*(db.repo.submit_feedback("s", "useful") for _ in range(20)))
    assert len({o.case_id for o in outcomes}) == 1
    assert sum(o.created for o in outcomes) == 1
    assert await _case_count(db) == 1


async def test_50_concurrent_useful_from_two_processes(db: Database, database_url: str) -> None:
    await finished_session(db, "s")
    context = multiprocessing.get_context("spawn")
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        results = await asyncio.gather(
            *(loop.run_in_executor(pool, useful_feedback_worker, database_url, "s", 25) for _ in range(2))
        )
    case_ids = [case_id for batch in results for case_id in batch]
    assert len(case_ids) == 50
    assert len(set(case_ids)) == 1 and case_ids[0] is not None
    (case,) = await db.repo.list_cases()
    assert case.case_id == case_ids[0]
