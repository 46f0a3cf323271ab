"""Structured cases (docs/design.md §7): a case's fault category, error code, services and alert
names, extracted by rules.case_facts from its session's verified evidence when useful feedback
makes it; the back-fill of cases made before that (`evigate cases backfill`); and ListCases."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evigate.rules.case_facts import CaseFacts, FaultCatalog, extract, load_fault_catalog, verified_evidence
from evigate.rules.enums import CallStatus
from evigate.storage.records import CaseRecord, TraceRecord

log = logging.getLogger("evigate.cases")


class CaseLibrary(Protocol):
    async def get_trace(self, session_id: str) -> TraceRecord | None: ...

    async def structure_case(
        self,
        case_id: str,
        fault_category: str,
        error_code: str | None,
        services: Sequence[str],
        alert_names: Sequence[str],
    ) -> bool: ...

    async def unstructured_cases(self, limit: int = 1000) -> list[CaseRecord]: ...

    async def find_cases(
        self,
        *,
        fault_category: str | None = None,
        service: str | None = None,
        error_code: str | None = None,
        include_retired: bool = False,
        limit: int = 50,
    ) -> list[CaseRecord]: ...


def session_facts(trace: TraceRecord, catalog: FaultCatalog) -> CaseFacts:
    """The facts of a session's case, from what the session stored."""
    evaluation = (trace.session.self_evaluation or {}).get("verifier_evaluation")
    evidence = verified_evidence(
        evaluation if isinstance(evaluation, dict) else None,
        trace.session.planner_plan,
        [inv.arguments for inv in trace.invocations if inv.status == CallStatus.SUCCESS],
    )
    return extract(evidence, catalog)


@dataclass(frozen=True)
class BackfillReport:
    examined: int
    structured: int


class CaseUseCase:
    def __init__(self, library: CaseLibrary, catalog: FaultCatalog | None = None) -> None:
        self._library = library
        self._catalog = catalog or load_fault_catalog()

    async def structure(self, session_id: str, case_id: str) -> CaseFacts | None:
        """Extracts and stores a case's facts; None when the session is gone."""
        trace = await self._library.get_trace(session_id)
        if trace is None:
            return None
        facts = session_facts(trace, self._catalog)
        await self._library.structure_case(
            case_id, facts.fault_category, facts.error_code, facts.services, facts.alert_names
        )
        log.info(
            "case structured",
            extra={
                "case_id": case_id,
                "fault_category": facts.fault_category,
                "error_code": facts.error_code,
            },
        )
        return facts

    async def backfill(self, batch: int = 200) -> BackfillReport:
        """Structures every GENERAL case. Idempotent: a structured case is no longer GENERAL, so a
        second run finds nothing to do."""
        examined = structured = 0
        seen: set[str] = set()
        while True:
            pending = [c for c in await self._library.unstructured_cases(batch) if c.case_id not in seen]
            if not pending:
                return BackfillReport(examined, structured)
            for case in pending:
                seen.add(case.case_id)
                examined += 1
                if await self.structure(case.diagnosis_id, case.case_id) is not None:
                    structured += 1

    async def list_cases(self, limit: int = 1000) -> list[CaseRecord]:
        """Every active case, newest first (the viewer's case page)."""
        return await self.list(None, None, None, False, limit)

    async def list(
        self,
        fault_category: str | None,
        service: str | None,
        error_code: str | None,
        include_retired: bool,
        limit: int,
    ) -> list[CaseRecord]:
        return await self._library.find_cases(
            fault_category=fault_category,
            service=service,
            error_code=error_code,
            include_retired=include_retired,
            limit=limit,
        )


async def backfill_database(url: str, catalog_file: Path | None = None) -> BackfillReport:
    """`evigate cases-backfill`: opens the database, structures its GENERAL cases, closes it."""
    from evigate.storage import Database

    database = await Database.open(url, pool_size=1)
    try:
        return await CaseUseCase(database.repo, load_fault_catalog(catalog_file)).backfill()
    finally:
        await database.close()
