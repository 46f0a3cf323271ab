"""The tools record through storage's real Repository and read its case library (SQLite)."""

from __future__ import annotations

from pathlib import Path

from evigate.server.deadline import Deadline
from evigate.server.tools import CaseSource, InvocationRecorder, SessionToolBox, build_backend
from evigate.storage import Database, Repository, default_sqlite_url


def _fits(repo: Repository) -> tuple[InvocationRecorder, CaseSource]:
    return repo, repo  # checked by mypy: the Repository satisfies both tool seams


async def test_calls_are_recorded_in_the_database(tmp_path: Path) -> None:
    db = await Database.open(default_sqlite_url(tmp_path))
    try:
        recorder, cases = _fits(db.repo)
        await db.repo.create_session(
            "s-tools", "inventory-service 有 HikariCP 连接池耗尽的日志吗？", "zh", "test"
        )
        toolbox = SessionToolBox(build_backend(None, cases), recorder, "s-tools")
        first = await toolbox.call(
            "query_logs", {"service": "inventory-service", "keyword": "HikariCP"}, Deadline.none()
        )
        again = await toolbox.call(
            "query_logs", {"service": "inventory-service", "keyword": "HikariCP"}, Deadline.none()
        )
        failed = await toolbox.call("query_logs", {"pattern": "("}, Deadline.none())
        knowledge = await toolbox.call("lookup_knowledge", {"query": "HighCPUUsage"}, Deadline.none())
        rows = await db.repo.list_invocations("s-tools")
        assert [r.id for r in rows] == [
            first.invocation_id,
            again.invocation_id,
            failed.invocation_id,
            knowledge.invocation_id,
        ]
        assert rows[0].retrieval_details == first.retrieval_details
        assert rows[0].raw_result == first.raw_result
        assert rows[1].retrieval_details["deduped_from"] == first.invocation_id
        assert (rows[2].status, rows[2].retrieval_details["evidence_refs"]) == ("failed", [])
        assert rows[3].retrieval_details["match_level"] == "L0"
    finally:
        await db.close()


async def test_useful_sessions_are_searchable_cases(tmp_path: Path) -> None:
    db = await Database.open(default_sqlite_url(tmp_path))
    try:
        repo = db.repo
        await repo.create_session("s-case", "checkout 为什么报 OrderLockTimeoutException？", "zh", "test")
        answer = "当前查询检索到 checkout 服务的 OrderLockTimeoutException：订单锁等待超时。"
        await repo.finish_success("s-case", answer, {}, {}, [], {})
        outcome = await repo.submit_feedback("s-case", "useful")
        toolbox = SessionToolBox(build_backend(None, repo), repo, "s-case")
        result = await toolbox.call(
            "lookup_knowledge", {"query": "OrderLockTimeoutException"}, Deadline.none()
        )
        assert result.retrieval_details["match_level"] == "L0"
        assert result.raw_result is not None
        [block] = result.raw_result["evidence_blocks"]
        assert block["source"] == f"case:{outcome.case_id}" and block["text"] == answer
    finally:
        await db.close()
