"""Pure helpers that shape what each stage sees: the Verifier input, the tool trace summary, the
Composer's allowed material, the retry context and the persisted verifier evaluation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules.enums import CheckStatus, ClaimType, EvidenceStatus, Severity, ToolName, Verdict
from evigate.rules.sentence_material import build as sentence_material_of
from evigate.rules.sentence_types import SentenceMaterial
from evigate.rules.types import InvocationFacts, parse_evidence_refs
from evigate.storage.records import InvocationRecord

JSON = dict[str, Any]
TRACEABILITY_VERSION = "v1"


def invocation_facts(invocations: Sequence[InvocationRecord]) -> list[InvocationFacts]:
    """What the Gatekeeper needs of each recorded call; refs are None when none were stored."""
    return [InvocationFacts.from_seed(inv.id, inv.tool_name, inv.retrieval_details) for inv in invocations]


def sentence_material(
    composer_input: JSON, gatekeeper_result: JSON, invocations: Sequence[InvocationRecord]
) -> SentenceMaterial:
    """What each sentence of the answer may say (rules.sentence_check): the allowed claims with
    their verified excerpts and the refs they cite, every failed call of the session, and the
    missing information."""
    failed = {
        inv.id: f"{inv.tool_name}({_arguments(inv.arguments)}) failed ({inv.error})"
        for inv in invocations
        if inv.status != "success"
    }
    return sentence_material_of(
        composer_input, gatekeeper_result, invocation_facts(invocations), failed_calls=failed
    )


def _arguments(arguments: Mapping[str, Any] | None) -> str:
    return ", ".join(f"{key}={value}" for key, value in (arguments or {}).items())


def tool_trace_summary(invocations: Sequence[InvocationRecord]) -> list[JSON]:
    summary = []
    for inv in invocations:
        details = inv.retrieval_details or {}
        refs = parse_evidence_refs(details) or ()
        entry: JSON = {
            "source_invocation_id": inv.id,
            "tool_name": inv.tool_name,
            "status": inv.status,
            "evidence_status": details.get("evidence_status", EvidenceStatus.FAILED),
            "raw_paths": [ref.raw_path for ref in refs],
        }
        searched = inv.arguments.get("query") if inv.tool_name == ToolName.QUERY_LOGS else None
        if isinstance(searched, str) and searched.strip():
            entry["searched"] = searched  # a ranked search's words: what its lines were ranked by
        summary.append(entry)
    return summary


def retry_context(round_number: int, gatekeeper_result: JSON, verdict: JSON, parse_status: JSON) -> JSON:
    """What the next Executor round is told about a rejected round: the failed rules, and one issue
    per failure naming the claim and the binding (tool, invocation id, raw_path) it concerns. The
    shape is the contract's RetryContext (previous_round, failed_rules, errors, rationale)."""
    bindings = {
        (b.get("claim_id"), b.get("binding_index")): b
        for b in gatekeeper_result.get("checked_bindings", [])
        if isinstance(b, dict)
    }
    errors: list[JSON] = []
    for error in gatekeeper_result.get("errors", []):
        if not isinstance(error, dict):
            continue
        binding = bindings.get((error.get("claim_id"), error.get("binding_index")))
        message = str(error.get("message", ""))
        if binding is not None:
            message += (
                f" [binding: tool_name={binding.get('tool_name')}, "
                f"source_invocation_id={binding.get('source_invocation_id')}, "
                f"raw_path={binding.get('raw_path')}]"
            )
        errors.append({**error, "message": message})
    failed_rules = [str(rule) for rule in gatekeeper_result.get("failed_rules", [])]
    if parse_status.get("status") != "valid":
        failed_rules.append(PARSE_RULE)
        errors.append(_issue("", PARSE_RULE, str(parse_status.get("detail", ""))))
    for check in verdict.get("claim_checks", []):
        if isinstance(check, dict) and check.get("supported") is False:
            facts = ", ".join(str(f) for f in check.get("unsupported_facts") or [])
            reason = str(check.get("reason", ""))
            message = f"the Verifier found the claim unsupported: {reason}" + (
                f" (facts: {facts})" if facts else ""
            )
            errors.append(_issue(str(check.get("claim_id", "")), UNSUPPORTED_RULE, message))
    if any(e["rule_id"] == UNSUPPORTED_RULE for e in errors) and UNSUPPORTED_RULE not in failed_rules:
        failed_rules.append(UNSUPPORTED_RULE)
    return {
        "previous_round": round_number,
        "failed_rules": failed_rules,
        "errors": errors,
        "rationale": str(verdict.get("rationale", "")),
    }


PARSE_RULE = "contract.parse"
UNSUPPORTED_RULE = "verifier.unsupported_claim"


def _issue(claim_id: str, rule_id: str, message: str) -> JSON:
    return {
        "claim_id": claim_id,
        "binding_index": None,
        "rule_id": rule_id,
        "severity": Severity.REJECT,
        "message": message,
    }


def claims_of(structured: JSON) -> list[JSON]:
    """The claim objects of an executor output (which may be adversarial: any types)."""
    claims = structured.get("claims")
    return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []


def allowed_claims(structured: JSON, gatekeeper_result: JSON, verdict: JSON) -> list[JSON]:
    """Claims the Composer may express: the Verifier found them supported and every binding of
    theirs passed the Gatekeeper. Nothing is allowed from a REJECT verdict."""
    if verdict.get("verdict") == Verdict.REJECT:
        return []
    supported = {
        check.get("claim_id")
        for check in verdict.get("claim_checks", [])
        if isinstance(check, dict) and check.get("supported") is True
    }
    failed = {
        binding.get("claim_id")
        for binding in gatekeeper_result.get("checked_bindings", [])
        if isinstance(binding, dict) and binding.get("status") != CheckStatus.PASS
    }
    return [
        c for c in claims_of(structured) if c.get("claim_id") in supported and c.get("claim_id") not in failed
    ]


def composer_input(
    query: str, language: str, structured: JSON, gatekeeper_result: JSON, verdict: JSON
) -> JSON:
    allowed = allowed_claims(structured, gatekeeper_result, verdict)
    hypotheses = structured.get("hypotheses") if verdict.get("verdict") != Verdict.REJECT else []
    actions = structured.get("recommended_actions") if verdict.get("verdict") != Verdict.REJECT else []
    missing = structured.get("missing_info")
    return {
        "original_query": query,
        "language": language,
        "verdict": verdict.get("verdict", Verdict.REJECT),
        "allowed_claims": allowed,
        "allowed_hypotheses": hypotheses if isinstance(hypotheses, list) else [],
        "missing_info": missing if isinstance(missing, list) else [],
        "recommended_actions": actions if isinstance(actions, list) else [],
        "rationale": str(verdict.get("rationale", "")),
    }


def negative_claims(claims: Sequence[JSON]) -> list[JSON]:
    return [c for c in claims if c.get("claim_type") == ClaimType.NEGATIVE_OBSERVATION]


def verifier_evaluation(  # noqa: PLR0917 - one field per part of the record
    round_number: int,
    verdict: JSON,
    parse_status: JSON,
    structured: JSON,
    gatekeeper_result: JSON,
    summary: list[JSON],
    composer_output: JSON | None,
) -> JSON:
    """One round's record in self_evaluation (docs/design.md §4.2)."""
    evaluation = {
        key: verdict.get(key)
        for key in (
            "verdict",
            "groundedness_score",
            "critical_fact_count",
            "claim_checks",
            "facts_checked",
            "rationale",
        )
    }
    evaluation.update(
        {
            "round": round_number,
            "traceability_version": TRACEABILITY_VERSION,
            "executor_output_parse_status": parse_status,
            "executor_structured_output": structured,
            "gatekeeper_result": gatekeeper_result,
            "composer_output": composer_output,
            "tool_trace_summary": summary,
        }
    )
    return evaluation
