"""The case library as a front end reads it: the active cases, newest first, each naming the
session whose useful answer made it (CaseRecord.diagnosis_id)."""

from __future__ import annotations

from evigate.server.usecases.ports import SessionStore
from evigate.storage.records import CaseRecord

MAX_CASES = 1000


class CaseUseCase:
    def __init__(self, store: SessionStore) -> None:
        self._store = store

    async def list_cases(self, limit: int = MAX_CASES) -> list[CaseRecord]:
        return await self._store.list_cases(min(max(limit, 0), MAX_CASES))
