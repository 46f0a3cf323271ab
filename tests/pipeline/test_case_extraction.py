"""Case extraction over a labelled set of useful sessions from two worlds: the demo world run
through the offline pipeline (tests/golden/cases/demo-world.json) and a world of other stacks as
the store keeps its sessions (tests/golden/cases/other-world.json). Accuracy is printed; the test
holds it to the targets (category ≥ 90 %, error code ≥ 95 % where one exists) and allows no value
that no verified excerpt or plan of the session holds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evigate.rules.case_facts import CaseEvidence, CaseFacts, extract, load_fault_catalog, verified_evidence
from evigate.server.deadline import Deadline
from evigate.server.usecases.cases import session_facts
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "cases"
JSON = dict[str, Any]


@dataclass(frozen=True)
class Labelled:
    name: str
    facts: CaseFacts
    evidence: CaseEvidence
    fault_category: str
    error_code: str | None


def other_world_evaluation(session: JSON) -> JSON:
    """The stored shape of a final round: claims, the Verifier's checks, the Gatekeeper's result."""
    claims, checks = [], []
    for number, claim in enumerate(session["claims"], 1):
        claim_id = f"claim-{number}"
        claims.append(
            {
                "claim_id": claim_id,
                "claim_type": claim.get("type", "observation"),
                "claim_text": "scripted",
                "evidence_bindings": [
                    {"tool_name": tool, "evidence_excerpt": text} for tool, text in claim["excerpts"]
                ],
            }
        )
        checks.append({"claim_id": claim_id, "supported": claim["supported"]})
    return {
        "verdict": "PASS",
        "claim_checks": checks,
        "executor_structured_output": {"claims": claims},
        "gatekeeper_result": {"severity": session.get("gatekeeper", "none")},
    }


def other_world() -> list[Labelled]:
    catalog = load_fault_catalog()
    out = []
    for session in json.loads((GOLDEN / "other-world.json").read_text(encoding="utf-8"))["sessions"]:
        evidence = verified_evidence(
            other_world_evaluation(session),
            {"selected_skill": session["skill"]},
            [{"service": s} for s in session["services"]],
        )
        out.append(
            Labelled(
                session["id"],
                extract(evidence, catalog),
                evidence,
                session["fault_category"],
                session["error_code"],
            )
        )
    return out


async def demo_world(db: Database, build_pipeline: BuildPipeline) -> list[Labelled]:
    catalog = load_fault_catalog()
    pipeline = build_pipeline()
    out = []
    for session in json.loads((GOLDEN / "demo-world.json").read_text(encoding="utf-8"))["sessions"]:
        result = await pipeline.run(session["question"], None, "en", Deadline.after(30))
        assert result.status == "SUCCESS", session["question"]
        trace = await db.repo.get_trace(result.session_id)
        assert trace is not None
        evaluation = (trace.session.self_evaluation or {}).get("verifier_evaluation")
        evidence = verified_evidence(
            evaluation, trace.session.planner_plan, [i.arguments for i in trace.invocations]
        )
        facts = session_facts(trace, catalog)
        out.append(
            Labelled(session["question"], facts, evidence, session["fault_category"], session["error_code"])
        )
    return out


def invented(item: Labelled) -> list[str]:
    """Values of the facts that no verified excerpt, plan skill or planned service holds."""
    texts = [e.text for e in item.evidence.excerpts]
    values = [v for v in (item.facts.error_code, *item.facts.services, *item.facts.alert_names) if v]
    return [v for v in values if not any(v in t for t in texts)]


async def test_extraction_accuracy_over_two_worlds(
    db_backend: str, db: Database, build_pipeline: BuildPipeline
) -> None:
    if db_backend != "sqlite":  # the extraction is the same on both: one run is the measurement
        return
    items = [*await demo_world(db, build_pipeline), *other_world()]
    assert len(items) >= 30
    category_hits = [i for i in items if i.facts.fault_category == i.fault_category]
    with_code = [i for i in items if i.error_code is not None]
    code_hits = [i for i in with_code if i.facts.error_code == i.error_code]
    spurious_codes = [i for i in items if i.error_code is None and i.facts.error_code is not None]
    category_accuracy = len(category_hits) / len(items)
    code_accuracy = len(code_hits) / len(with_code)
    misses = [
        f"{i.name}: {i.facts.fault_category} (want {i.fault_category}), "
        f"{i.facts.error_code} (want {i.error_code})"
        for i in items
        if i not in category_hits or i.facts.error_code != i.error_code
    ]
    print(
        f"\ncase extraction: {len(items)} sessions; category {len(category_hits)}/{len(items)} "
        f"= {category_accuracy:.1%}; error code {len(code_hits)}/{len(with_code)} = {code_accuracy:.1%}; "
        f"codes where none was labelled: {len(spurious_codes)}"
    )
    print("\n".join(misses))
    assert [v for i in items for v in invented(i)] == []
    assert category_accuracy >= 0.90, misses
    assert code_accuracy >= 0.95, misses
