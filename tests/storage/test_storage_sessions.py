"""Sessions, invocations, rounds, finishing, evidence score (SQLite and MariaDB)."""

from __future__ import annotations

from datetime import UTC

import pytest

from evigate.storage import Database, SessionAlreadyExists, SessionNotFound
from tests.storage.storage_helpers import VERIFIER, finished_session, round_record

UNICODE = "HikariCP 连接池耗尽 🔥🚀 — ошибка"


async def test_create_and_get_session(db: Database) -> None:
    created = await db.repo.create_session(
        "s-1", "payment-service 是否有 HighCPUUsage 告警？", "zh", "replica-a"
    )
    assert created.status == "RUNNING"
    loaded = await db.repo.get_session("s-1")
    assert loaded is not None
    assert loaded.query == "payment-service 是否有 HighCPUUsage 告警？"
    assert loaded.language == "zh"
    assert loaded.owner == "replica-a"
    assert loaded.status == "RUNNING"
    assert loaded.answer is None and loaded.feedback is None and loaded.self_evaluation is None
    assert loaded.created_at.tzinfo is UTC
    assert loaded.created_at == created.created_at  # microseconds survive (DATETIME(6))
    assert await db.repo.get_session("missing") is None


async def test_session_id_length_is_checked(db: Database) -> None:
    await db.repo.create_session("x" * 64, "q", "zh", "o")
    for bad in ("", "x" * 65):
        with pytest.raises(ValueError, match="session_id"):
            await db.repo.create_session(bad, "q", "zh", "o")


async def test_long_error_texts_are_truncated(db: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "o")
    await db.repo.record_invocation("s", "query_logs", {}, "failed", "错" * 20_000, None, {}, 1.0)
    (invocation,) = await db.repo.list_invocations("s")
    assert invocation.error == "错" * 8000
    await db.repo.finish_failed("s", "因" * 20_000, {})
    session = await db.repo.get_session("s")
    assert session is not None and session.failure_reason == "因" * 8000


async def test_duplicate_session_raises(db: Database) -> None:
    await db.repo.create_session("dup", "q", "en", "o")
    with pytest.raises(SessionAlreadyExists):
        await db.repo.create_session("dup", "q", "en", "o")


async def test_record_and_list_invocations_in_order(db: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "o")
    details = {
        "evidence_status": "supported",
        "match_level": "L0",
        "evidence_refs": [{"raw_path": "$.logs[0]", "text": UNICODE}],
    }
    ids = [
        await db.repo.record_invocation(
            "s", "query_logs", {"keyword": UNICODE}, "success", None, {"logs": [UNICODE]}, details, 12.5
        ),
        await db.repo.record_invocation(
            "s",
            "query_metrics",
            {},
            "failed",
            "timeout 超时",
            None,
            {"evidence_status": "failed", "evidence_refs": []},
            3.0,
        ),
    ]
    assert ids[0] < ids[1]
    invocations = await db.repo.list_invocations("s")
    assert [i.id for i in invocations] == ids
    first, second = invocations
    assert first.retrieval_details == details  # Chinese and emoji survive the JSON round trip
    assert first.arguments == {"keyword": UNICODE}
    assert first.raw_result == {"logs": [UNICODE]}
    assert first.latency_ms == 12.5
    assert second.status == "failed" and second.error == "timeout 超时" and second.raw_result is None


async def test_record_invocation_unknown_session(db: Database) -> None:
    with pytest.raises(SessionNotFound):
        await db.repo.record_invocation("nope", "query_logs", {}, "success", None, None, {}, 1.0)


async def test_plan_and_rounds_upsert(db: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "o")
    plan = {"selected_skill": None, "selection_reason": "无", "plan": ["查日志"], "reasoning": "r"}
    await db.repo.save_plan("s", plan, {"agent_backend": "offline", "prompt_versions": {"planner": "v1"}})
    await db.repo.save_round("s", round_record(1, verdict={"verdict": "REJECT"}, proposed_verdict="PASS"))
    await db.repo.save_round("s", round_record(2))
    await db.repo.save_round("s", round_record(1, verdict_override_reason="gatekeeper reject 🚫"))
    trace = await db.repo.get_trace("s")
    assert trace is not None
    assert trace.session.planner_plan == plan
    assert trace.session.meta == {"agent_backend": "offline", "prompt_versions": {"planner": "v1"}}
    assert [r.round for r in trace.rounds] == [1, 2]
    assert trace.rounds[0] == round_record(1, verdict_override_reason="gatekeeper reject 🚫")
    with pytest.raises(SessionNotFound):
        await db.repo.save_round("nope", round_record(1))
    with pytest.raises(SessionNotFound):
        await db.repo.save_plan("nope", plan, {})


async def test_finish_success_enqueues_job_atomically(db: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "o")
    await db.repo.finish_success(
        "s", "答案 ✅", {"answer_summary": "摘要"}, VERIFIER, [VERIFIER], {"stage_ms": {"planner": 1}}
    )
    session = await db.repo.get_session("s")
    assert session is not None
    assert session.status == "SUCCESS" and session.answer == "答案 ✅"
    assert session.composer_output == {"answer_summary": "摘要"}
    assert session.extras == {"stage_ms": {"planner": 1}}
    assert session.self_evaluation == {
        "verifier_evaluation": VERIFIER,
        "verifier_evaluation_rounds": [VERIFIER],
    }
    jobs = await db.repo.claim_jobs("w", "evidence_score", 10, 30)
    assert [(j.kind, j.session_id) for j in jobs] == [("evidence_score", "s")]
    with pytest.raises(SessionNotFound):
        await db.repo.finish_success("nope", "a", {}, {}, [], {})
    assert (await db.repo.job_stats()).running == 1  # the failed finish enqueued nothing


async def test_finish_failed_records_reason_without_job(db: Database) -> None:
    await db.repo.create_session("s", "q", "zh", "o")
    await db.repo.finish_failed("s", "executor timed out", {"stage": "executor"})
    session = await db.repo.get_session("s")
    assert session is not None
    assert (session.status, session.failure_reason, session.answer) == ("FAILED", "executor timed out", None)
    assert (await db.repo.job_stats()).pending == 0


async def test_finish_failed_never_overwrites_a_finished_session(db: Database) -> None:
    await finished_session(db, "done")
    await db.repo.finish_failed("done", "cancelled while the SUCCESS committed", {})
    session = await db.repo.get_session("done")
    assert session is not None
    assert (session.status, session.failure_reason) == ("SUCCESS", None)
    with pytest.raises(SessionNotFound):
        await db.repo.finish_failed("missing", "reason", {})


async def test_write_evidence_score_keeps_verifier_evaluation(db: Database) -> None:
    await finished_session(db, "s")
    score = {
        "evidence_score": 65,
        "source": "rule",
        "factors": [{"name": "l0_exact_match", "delta": 35, "description": "L0 精确匹配命中 🎯"}],
        "llm_opinion": None,
        "verifier_evaluation": {"verdict": "forged"},  # never overwrites the stored one
    }
    await db.repo.write_evidence_score("s", score)
    session = await db.repo.get_session("s")
    assert session is not None and session.self_evaluation is not None
    assert session.self_evaluation["evidence_score"] == 65
    assert session.self_evaluation["factors"][0]["description"] == "L0 精确匹配命中 🎯"
    assert session.self_evaluation["llm_opinion"] is None
    assert session.self_evaluation["verifier_evaluation"] == VERIFIER
    assert session.self_evaluation["verifier_evaluation_rounds"] == [VERIFIER]
    rescored = {"evidence_score": 30, "source": "rule", "factors": []}
    await db.repo.write_evidence_score("s", rescored)
    session = await db.repo.get_session("s")
    assert session is not None and session.self_evaluation is not None
    assert session.self_evaluation["evidence_score"] == 30
    assert session.self_evaluation["llm_opinion"] is None  # merged, not replaced
    assert session.self_evaluation["verifier_evaluation"] == VERIFIER
    with pytest.raises(SessionNotFound):
        await db.repo.write_evidence_score("nope", score)


async def test_fail_orphaned_sessions_only_touches_owner_running(db: Database) -> None:
    await db.repo.create_session("a1", "q", "zh", "replica-a")
    await db.repo.create_session("a2", "q", "zh", "replica-a")
    await db.repo.create_session("b1", "q", "zh", "replica-b")
    await finished_session(db, "a3")
    assert await db.repo.fail_orphaned_sessions("replica-a", "replica restarted") == 2
    statuses = {}
    for sid in ("a1", "a2", "b1"):
        session = await db.repo.get_session(sid)
        assert session is not None
        statuses[sid] = (session.status, session.failure_reason)
    assert statuses == {
        "a1": ("FAILED", "replica restarted"),
        "a2": ("FAILED", "replica restarted"),
        "b1": ("RUNNING", None),
    }
    assert await db.repo.fail_orphaned_sessions("replica-a", "again") == 0
