"""Helpers for the storage tests (also imported by spawned worker processes)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pymysql
from sqlalchemy import event

from evigate.storage import Database, RoundRecord

VERIFIER = {
    "verdict": "PASS",
    "groundedness_score": 1.0,
    "critical_fact_count": 1,
    "claim_checks": [],
    "facts_checked": [],
    "rationale": "证据充分 ✅",
    "round": 1,
    "traceability_version": "v1",
}


def round_record(number: int, **overrides: Any) -> RoundRecord:
    fields: dict[str, Any] = {
        "round": number,
        "executor_raw_text": '{"answer_version": "executor_evidence_v2"}',
        "executor_output": {"answer_version": "executor_evidence_v2", "claims": []},
        "parse_status": {"status": "valid", "detail": "parsed executor evidence contract"},
        "gatekeeper_result": {
            "status": "pass",
            "severity": "none",
            "rule_set_version": "gatekeeper-rules-v1",
        },
        "verdict": {"verdict": "PASS"},
        "proposed_verdict": "PASS",
        "verdict_override_reason": "",
        "retry_context": None,
    }
    fields.update(overrides)
    return RoundRecord(**fields)


async def finished_session(db: Database, session_id: str, query: str = "payment-service CPU?") -> None:
    await db.repo.create_session(session_id, query, "zh", "owner-1")
    await db.repo.finish_success(session_id, f"答案 for {session_id}", {}, VERIFIER, [VERIFIER], {})


async def _useful_many(url: str, session_id: str, count: int) -> list[str | None]:
    db = await Database.open(url, pool_size=count, auto_migrate=False)
    try:
        outcomes = await asyncio.gather(
            *(db.repo.submit_feedback(session_id, "useful") for _ in range(count))
        )
    finally:
        await db.close()
    return [outcome.case_id for outcome in outcomes]


def useful_feedback_worker(url: str, session_id: str, count: int) -> list[str | None]:
    """Runs in its own OS process with its own event loop and engine."""
    return asyncio.run(_useful_many(url, session_id, count))


async def _open_and_create(url: str, session_id: str) -> str:
    db = await Database.open(url)
    try:
        await db.repo.create_session(session_id, "q", "zh", "o")
    finally:
        await db.close()
    return session_id


def open_fresh_sqlite_worker(url: str, session_id: str) -> str:
    """Opens (and so auto-migrates) a SQLite file that may not exist yet, in its own process."""
    return asyncio.run(_open_and_create(url, session_id))


@contextlib.contextmanager
def sql_statements(db: Database) -> Iterator[list[str]]:
    """Every statement SQLAlchemy sends for `db` inside the block."""
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)


def kill_mysql_connection(thread_id: int) -> None:
    """KILLs one server connection of the test MariaDB, as a crash or an operator would."""
    admin = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="")
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"KILL {int(thread_id)}")
    finally:
        admin.close()
