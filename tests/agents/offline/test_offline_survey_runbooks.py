"""A survey quotes the runbooks of the alerts it found, looked up by their names: a runbook that only
reads like the query (an L1 match) belongs to another alert and is not quoted."""

from __future__ import annotations

from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.executor import build_evidence
from evigate.server.tools.calls import ToolCallResult


def _lookup(level: str) -> tuple[PlannedCall, ToolCallResult]:
    call = PlannedCall("lookup_knowledge", {"query": "TapeDriveJammed steps"}, purpose="survey")
    ref = {
        "raw_path": "$.blocks[0]",
        "text": "[runbook] Reindex the archive: 1. stop the indexer (keys=ArchiveLag)",
    }
    details = {"evidence_status": "supported", "match_level": level, "evidence_refs": [ref]}
    return call, ToolCallResult(911, "lookup_knowledge", dict(call.arguments), "success", None, {}, details)


def test_only_a_runbook_keyed_by_the_alert_is_quoted_in_a_survey() -> None:
    assert build_evidence([_lookup("L1")], "en")["claims"] == []
    (claim,) = build_evidence([_lookup("L0")], "en")["claims"]
    assert claim["claim_type"] == "observation"


def test_a_question_that_asks_for_guidance_keeps_its_semantic_match() -> None:
    call, result = _lookup("L1")
    asked = PlannedCall(call.tool_name, dict(call.arguments))
    assert len(build_evidence([(asked, result)], "en")["claims"]) == 1
