"""The case library as the Cases page lists it, structured fields included (error code, services,
alert names: empty until the case is structured). The one place the viewer reads cases."""

from __future__ import annotations

from dataclasses import dataclass

from evigate.server.usecases.cases import CaseUseCase


@dataclass(frozen=True, slots=True)
class CaseRow:
    case_id: str
    session_id: str  # the diagnosis the case came from
    title: str
    fault_category: str
    error_code: str
    services: tuple[str, ...]
    alert_names: tuple[str, ...]
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
            c.error_code or "",
            c.services,
            c.alert_names,
            c.root_cause,
            c.solution,
            c.created_by,
            c.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        )
        for c in await cases.list_cases()
    ]
