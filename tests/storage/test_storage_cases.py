"""storage.cases and storage.opinions on SQLite and MariaDB: structured fields written and read
back, cases found by category, error code and service (retired ones only on request), the
back-fill's GENERAL list, and an LLM opinion written once beside the rule factors."""

from __future__ import annotations

from evigate.storage import Database
from tests.storage.storage_helpers import finished_session


async def _case(db: Database, session_id: str) -> str:
    await finished_session(db, session_id, f"question {session_id}")
    case_id = (await db.repo.submit_feedback(session_id, "useful")).case_id
    assert case_id is not None
    return case_id


async def test_structured_cases_are_found_by_their_fields(db: Database) -> None:
    pool, oom, plain = await _case(db, "pool"), await _case(db, "oom"), await _case(db, "plain")
    assert [c.case_id for c in await db.repo.unstructured_cases()] == [pool, oom, plain]
    code = "java.sql.SQLTransientConnectionException"
    assert await db.repo.structure_case(pool, "connection-pool", code, ["order-service"], [])
    assert await db.repo.structure_case(pool, "connection-pool", code, ["order-service"], [])  # again
    assert await db.repo.structure_case(
        oom, "resource-exhaustion", None, ["user-service"], ["HighMemoryUsage"]
    )
    assert not await db.repo.structure_case("no-such-case", "unknown", None, [], [])
    assert [c.case_id for c in await db.repo.unstructured_cases()] == [plain]

    stored = await db.repo.get_case(pool)
    assert stored is not None
    assert (stored.fault_category, stored.error_code, stored.services) == (
        "connection-pool",
        code,
        ("order-service",),
    )
    assert [c.case_id for c in await db.repo.find_cases(error_code=code)] == [pool]
    assert [c.case_id for c in await db.repo.find_cases(fault_category="resource-exhaustion")] == [oom]
    assert [c.case_id for c in await db.repo.find_cases(service="user-service")] == [oom]
    assert {c.case_id for c in await db.repo.find_cases()} == {pool, oom, plain}
    await db.repo.submit_feedback("oom", "not_useful")  # retired: listed only on request
    assert await db.repo.find_cases(service="user-service") == []
    assert [c.case_id for c in await db.repo.find_cases(service="user-service", include_retired=True)] == [
        oom
    ]


async def test_an_opinion_is_written_once_and_kept_by_a_later_score(db: Database) -> None:
    await finished_session(db, "s", "question")
    llm = [{"name": "llm_has_root_cause", "delta": 0, "description": "no: r", "source": "llm"}]
    assert await db.repo.write_llm_opinion("s", {"model": "m"}, llm)
    assert not await db.repo.write_llm_opinion("s", {"model": "other"}, [])
    rule_factors: list[dict[str, object]] = [{"name": "x", "delta": 30, "description": ""}]
    rule = {"evidence_score": 30, "source": "rule", "factors": rule_factors}
    await db.repo.write_evidence_score("s", {**rule, "llm_opinion": None})
    session = await db.repo.get_session("s")
    evaluation = (session.self_evaluation if session else None) or {}
    assert evaluation["llm_opinion"] == {"model": "m"}
    assert evaluation["factors"] == [*rule_factors, *llm]
    assert evaluation["evidence_score"] == 30 and "verifier_evaluation" in evaluation
