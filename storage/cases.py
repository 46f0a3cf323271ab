"""The case library's structured fields (V014): writing a case's extracted facts, finding the cases
still waiting for them (the back-fill), and listing cases by structure (ListCases)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.storage.records import CaseRecord
from evigate.storage.rows import CASE, case_record
from evigate.storage.runner import Runner

GENERAL = "GENERAL"  # the category of a case not structured yet
ERROR_CODE_CHARS = 191  # case_library.error_code VARCHAR(191): indexable in utf8mb4
MAX_LIST = 1000


class CaseStore:
    _runner: Runner

    async def structure_case(
        self,
        case_id: str,
        fault_category: str,
        error_code: str | None,
        services: Sequence[str],
        alert_names: Sequence[str],
    ) -> bool:
        """Writes a case's extracted fields; True when the case exists. Idempotent: the same facts
        written twice leave the same row."""
        values = {
            "fault_category": fault_category[:32],
            "error_code": None if error_code is None else error_code[:ERROR_CODE_CHARS],
            "services": list(services),
            "alert_names": list(alert_names),
        }

        async def work(conn: AsyncConnection) -> bool:
            result = await conn.execute(update(CASE).where(CASE.c.case_id == case_id).values(**values))
            return bool(result.rowcount)

        return await self._runner.write(work)

    async def get_case(self, case_id: str) -> CaseRecord | None:
        async def work(conn: AsyncConnection) -> CaseRecord | None:
            row = (await conn.execute(select(CASE).where(CASE.c.case_id == case_id))).first()
            return None if row is None else case_record(row)

        return await self._runner.read(work)

    async def unstructured_cases(self, limit: int = MAX_LIST) -> list[CaseRecord]:
        """Cases still GENERAL (made before V014, or whose extraction never ran), oldest first."""

        async def work(conn: AsyncConnection) -> list[CaseRecord]:
            rows = await conn.execute(
                select(CASE)
                .where(CASE.c.fault_category == GENERAL)
                .order_by(CASE.c.created_at, CASE.c.id)
                .limit(max(limit, 0))
            )
            return [case_record(row) for row in rows]

        return await self._runner.read(work)

    async def find_cases(
        self,
        *,
        fault_category: str | None = None,
        service: str | None = None,
        error_code: str | None = None,
        include_retired: bool = False,
        limit: int = 50,
    ) -> list[CaseRecord]:
        """Cases newest first, filtered by structure. The service filter runs here, not in SQL: the
        services are a JSON list, and MariaDB and SQLite spell JSON membership differently."""
        size = min(max(limit, 1), MAX_LIST)
        conditions = []
        if fault_category:
            conditions.append(CASE.c.fault_category == fault_category)
        if error_code:
            conditions.append(CASE.c.error_code == error_code)
        if not include_retired:
            conditions.append(CASE.c.retired_at.is_(None))
        statement = select(CASE).where(*conditions).order_by(CASE.c.created_at.desc(), CASE.c.id.desc())
        if not service:
            statement = statement.limit(size)

        async def work(conn: AsyncConnection) -> list[CaseRecord]:
            found: list[CaseRecord] = []
            for row in await conn.execute(statement):
                record = case_record(row)
                if service and service not in record.services:
                    continue
                found.append(record)
                if len(found) >= size:
                    break
            return found

        return await self._runner.read(work)
