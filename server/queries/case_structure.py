"""lookup_knowledge over structured cases (docs/design.md §7): a case's error code and alert names
are exact keys (a question naming them finds the case at L0), and its services and fault category
filter and rank the cases a question matches.

Kept apart from the retrieval index (server.sources.retrieval) so that it stays pure:
`structure_extra` is what a case block carries, `rank_cases` the filter and boost over matched
blocks, `conditional_keys` the keys that count only beside a service.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evigate.server.queries.types import CaseLike

SERVICES, ERROR_CODE, ALERTS = "services", "error_code", "alert_names"
_HTTP_STATUS = re.compile(r"^[45]\d\d$")


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str) and v) if isinstance(value, list | tuple) else ()


def structured_keys(case: CaseLike) -> tuple[str, ...]:
    """The case's exact keys from its structure: its error code (a bare HTTP status only as
    "HTTP 502" and "502 " forms are too common to be a key alone) and its alert names."""
    keys: list[str] = []
    code = getattr(case, ERROR_CODE, None)
    if isinstance(code, str) and code:
        keys.append(f"HTTP {code}" if _HTTP_STATUS.match(code) else code)
        if "." in code:  # java.sql.SQLTransientConnectionException: the class name alone too
            keys.append(code.rsplit(".", 1)[-1])
    keys.extend(_strings(getattr(case, ALERTS, ())))
    return tuple(dict.fromkeys(keys))


def structure_extra(case: CaseLike) -> dict[str, str]:
    """The structure a case block shows (and rank_cases reads); nothing for an unstructured case."""
    extra: dict[str, str] = {}
    code = getattr(case, ERROR_CODE, None)
    if isinstance(code, str) and code:
        extra[ERROR_CODE] = code
    services = _strings(getattr(case, SERVICES, ()))
    if services:
        extra[SERVICES] = ", ".join(services)
    alerts = _strings(getattr(case, ALERTS, ()))
    if alerts:
        extra[ALERTS] = ", ".join(alerts)
    return extra


def _named(text: str, value: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(value.lower())}(?![\w-])", text) is not None


def rank_cases(query: str, extras: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """Per block extra: None when a structured case names services and the question names another
    service of the case library but none of the case's (the case is about another service); else a
    boost: +2 per service of the case the question names, +2 for its error code, +1 for its fault
    category. Non-case blocks get 0."""
    lowered = query.lower()
    known = {
        service
        for extra in extras
        for service in str(extra.get(SERVICES, "")).split(", ")
        if service and extra.get("kind") == "case"
    }
    asked = {service for service in known if _named(lowered, service)}
    ranks: list[int | None] = []
    for extra in extras:
        if extra.get("kind") != "case":
            ranks.append(0)
            continue
        services = {s for s in str(extra.get(SERVICES, "")).split(", ") if s}
        if services and asked and not services & asked:
            ranks.append(None)
            continue
        boost = 2 * len(services & asked)
        code = str(extra.get(ERROR_CODE, ""))
        if code and (_named(lowered, code) or _named(lowered, code.rsplit(".", 1)[-1])):
            boost += 2
        category = str(extra.get("fault_category", ""))
        if (
            category
            and category not in {"GENERAL", "unknown"}
            and _named(lowered, category.replace("-", " "))
        ):
            boost += 1
        ranks.append(boost)
    return ranks


def conditional_keys(query: str, extra: Mapping[str, Any]) -> list[str]:
    """A bare HTTP status (e.g. "502") matches a case only in a question that also names one of the
    case's services: alone, a three-digit number is no key."""
    code = str(extra.get(ERROR_CODE, ""))
    if not _HTTP_STATUS.match(code) or not re.search(rf"(?<!\d){code}(?!\d)", query):
        return []
    services = [s for s in str(extra.get(SERVICES, "")).split(", ") if s]
    return [code] if any(_named(query.lower(), s) for s in services) else []


def stamp(case: CaseLike) -> str:
    """What changes a case's index entry besides its text: its structure, written after creation."""
    return (
        f"{getattr(case, 'fault_category', '')}:{getattr(case, ERROR_CODE, '')}:{getattr(case, SERVICES, '')}"
    )
