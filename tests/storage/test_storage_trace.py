"""Trace reads, session listing and the case list, on SQLite and MariaDB."""

from __future__ import annotations

import pytest

from evigate.storage import Database, InvalidPageToken
from tests.storage.storage_helpers import finished_session, round_record, sql_statements


async def test_trace_reads_everything_in_three_selects(db: Database) -> None:
    await finished_session(db, "s")
    for i in range(100):
        await db.repo.record_invocation(
            "s",
            "query_logs",
            {"i": i},
            "success",
            None,
            None,
            {
                "evidence_status": "supported",
                "evidence_refs": [{"raw_path": f"$.logs[{i}]", "text": f"行 {i} 🙂"}],
            },
            float(i),
        )
    for n in (1, 2):
        await db.repo.save_round("s", round_record(n))
    case = await db.repo.submit_feedback("s", "useful")

    with sql_statements(db) as statements:
        trace = await db.repo.get_trace("s")

    assert trace is not None
    assert len(trace.invocations) == 100
    assert trace.invocations[7].retrieval_details["evidence_refs"][0]["text"] == "行 7 🙂"
    assert [r.round for r in trace.rounds] == [1, 2]
    assert trace.case_id == case.case_id
    assert trace.session.status == "SUCCESS"
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 3, statements
    assert len(statements) <= 4  # plus SQLite's explicit BEGIN


async def test_trace_of_unknown_session_is_none(db: Database) -> None:
    assert await db.repo.get_trace("nope") is None


async def test_trace_without_case(db: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "o")
    trace = await db.repo.get_trace("s")
    assert trace is not None
    assert (trace.case_id, trace.rounds, trace.invocations) == (None, [], [])


async def _collect(db: Database, feedback: str | None, status: str | None, size: int) -> list[str]:
    seen: list[str] = []
    token: str | None = None
    while True:
        page, token = await db.repo.list_sessions(feedback, status, size, token)
        assert len(page) <= size
        seen.extend(s.session_id for s in page)
        if token is None:
            return seen


async def test_list_sessions_keyset_pagination_newest_first(db: Database) -> None:
    ids = [f"s{i:02d}" for i in range(23)]
    for i, sid in enumerate(ids):
        await db.repo.create_session(sid, "q", "zh", "o")
        if i % 3 == 0:
            await db.repo.finish_success(sid, "a", {}, {}, [], {})
            await db.repo.submit_feedback(sid, "not_useful")
    newest_first = list(reversed(ids))
    assert await _collect(db, None, None, 5) == newest_first
    assert await _collect(db, None, None, 100) == newest_first
    bad = [sid for sid in newest_first if int(sid[1:]) % 3 == 0]
    assert await _collect(db, "not_useful", None, 2) == bad
    assert await _collect(db, "not_useful", "SUCCESS", 3) == bad
    assert await _collect(db, None, "RUNNING", 4) == [s for s in newest_first if s not in bad]
    assert await _collect(db, "useful", None, 4) == []


async def test_list_sessions_rejects_garbage_tokens(db: Database) -> None:
    for i in range(3):
        await db.repo.create_session(f"s{i}", "q", "zh", "o")
    _, token = await db.repo.list_sessions(None, None, 1, None)
    assert token is not None
    for garbage in ("garbage!", "eyJ4IjoxfQ", "", "%%%", token[:-3]):
        if garbage == "":
            continue  # empty means "first page"
        with pytest.raises(InvalidPageToken):
            await db.repo.list_sessions(None, None, 1, garbage)
    with pytest.raises(InvalidPageToken, match="different filters"):
        await db.repo.list_sessions("useful", None, 1, token)


async def test_list_cases_newest_first_with_limit(db: Database) -> None:
    for sid in ("a", "b", "c"):
        await finished_session(db, sid)
        await db.repo.submit_feedback(sid, "useful")
    assert [c.diagnosis_id for c in await db.repo.list_cases()] == ["c", "b", "a"]
    assert [c.diagnosis_id for c in await db.repo.list_cases(limit=2)] == ["c", "b"]
