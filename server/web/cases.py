"""The case library as the Cases page lists it. The one place that reads cases, so that it can
switch to a ListCases use case with structured case fields when there is one."""

from __future__ import annotations

from dataclasses import dataclass

from evigate.server.usecases.cases import CaseUseCase


@dataclass(frozen=True, slots=True)
class CaseRow:
    case_id: str
    session_id: str  # the diagnosis the case came from
    title: str
    fault_category: str
    root_cause: str
    solution: str
    created_by: str
    created_at: str


async def case_rows(cases: CaseUseCase) -> list[CaseRow]:
    return [
        CaseRow(
            c.case_id,
            c.diagnosis_id,
            c.title,
            c.fault_category,
            c.root_cause,
            c.solution,
            c.created_by,
            c.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        )
        for c in await cases.list_cases()
    ]
