"""`evigate cases-backfill` on SQLite and MariaDB: cases made before structured cases (GENERAL)
get their fields from their sessions' verified evidence; a second run finds nothing to do."""

from __future__ import annotations

import json

from evigate.server.deadline import Deadline
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline
from tests.server.test_cli import evigate

POOL_QUESTION = "Does order-service have HikariCP pool-exhaustion logs?"


async def test_backfill_structures_general_cases_once(
    db: Database, database_url: str, build_pipeline: BuildPipeline
) -> None:
    pipeline = build_pipeline()
    questions = {
        POOL_QUESTION: ("connection-pool", "java.sql.SQLTransientConnectionException"),
        "Does payment-service have a HighCPUUsage alert right now?": ("resource-exhaustion", None),
        "gateway 有 502 错误日志吗？": ("dependency-failure", "502"),
    }
    cases: dict[str, tuple[str, str | None]] = {}
    for question, expected in questions.items():
        result = await pipeline.run(question, None, "en", Deadline.after(30))
        outcome = await db.repo.submit_feedback(result.session_id, "useful")  # storage alone: GENERAL
        assert outcome.case_id is not None
        cases[outcome.case_id] = expected
    assert {c.fault_category for c in await db.repo.list_cases()} == {"GENERAL"}

    first = evigate("cases-backfill", "--database-url", database_url, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"examined": 3, "structured": 3}
    stored = {c.case_id: (c.fault_category, c.error_code) for c in await db.repo.list_cases()}
    assert stored == cases
    second = evigate("cases-backfill", "--database-url", database_url, "--json")
    assert json.loads(second.stdout) == {"examined": 0, "structured": 0}
    assert {c.case_id: (c.fault_category, c.error_code) for c in await db.repo.list_cases()} == stored
