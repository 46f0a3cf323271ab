"""GatekeeperService.Check's domain step: an outside Executor's output against a session's calls."""

from __future__ import annotations

from typing import Any

from rules import gatekeeper
from rules.catalog import Catalog
from server.pipeline import material
from storage.errors import SessionNotFound
from storage.repository import Repository


async def check_session_evidence(
    repo: Repository, catalog: Catalog, session_id: str, evidence: dict[str, Any]
) -> dict[str, Any]:
    """The gatekeeper result dict; SessionNotFound for an unknown session."""
    if await repo.get_session(session_id) is None:
        raise SessionNotFound(session_id)
    invocations = await repo.list_invocations(session_id)
    return gatekeeper.check(evidence, material.invocation_facts(invocations), catalog).to_seed()
