"""OfflineVerifier: lexical derivability of each claim from its Gatekeeper-verified excerpts.

It reads only the structured output and the Gatekeeper's checked bindings (never the raw text),
and calls no tools. Verdict: PASS when every claim is derivable and the Gatekeeper found nothing;
LOW_CONFID when some claims are derivable (or the Gatekeeper lowered confidence); REJECT otherwise.

Scope: an observation citing log lines must cite lines that hold the log question's subject (its
log terms, found in the question as the Executor finds them, or most of the words of the ranked
search that found the line: the subject as a log writes it, which the question may have said in
another language); one that does not answers another question and is not derivable, whatever its
facts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from evigate.rules.enums import CheckStatus, ClaimType, Severity, ToolName, Verdict
from evigate.server.agents.base import JSON, StageOutput
from evigate.server.agents.offline.facts import (
    critical_facts,
    has_scoped_negative_phrase,
    is_no_evidence_text,
    is_overstatement,
    unsupported,
)
from evigate.server.deadline import Deadline
from evigate.server.sources.services import CatalogView, ServiceCatalog
from evigate.server.understanding.entities import catalog_view, extract
from evigate.server.understanding.vocabulary import LogTerm, SearchedWords

PROMPT_VERSION = "offline-verifier-v2"
_NARROW_TYPES = (ClaimType.OBSERVATION, ClaimType.NEGATIVE_OBSERVATION)
_CJK = re.compile(r"[\u4e00-\u9fff]")


class Subject(Protocol):
    """What a cited log line must hold to answer the question."""

    @property
    def name(self) -> str: ...

    def matches(self, text: str) -> bool: ...


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def verified_excerpts(claim: Mapping[str, Any], checked_bindings: Sequence[Any]) -> list[str]:
    """Excerpts of this claim's bindings that the Gatekeeper passed (its matched_text as fallback)."""
    claim_id = claim.get("claim_id")
    bindings = [b for b in _as_list(claim.get("evidence_bindings")) if isinstance(b, Mapping)]
    out: list[str] = []
    for checked in checked_bindings:
        if (
            not isinstance(checked, Mapping)
            or checked.get("claim_id") != claim_id
            or checked.get("status") != CheckStatus.PASS
        ):
            continue
        found: Mapping[str, Any] | None = None
        index = checked.get("binding_index")
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(bindings):
            found = bindings[index]
        else:
            for candidate in bindings:
                same_path = candidate.get("raw_path") == checked.get("raw_path")
                same_id = candidate.get("source_invocation_id") in (None, checked.get("source_invocation_id"))
                if same_path and same_id:
                    found = candidate
                    break
        excerpt = found.get("evidence_excerpt") if found is not None else None
        if isinstance(excerpt, str) and excerpt.strip():
            out.append(excerpt)
        elif isinstance(checked.get("matched_text"), str):
            out.append(checked["matched_text"])
    return out


def subject_terms(original_query: str, catalog: CatalogView | None = None) -> tuple[LogTerm, ...]:
    """The log terms a log question names (its subject), as the offline Executor queries them. A
    survey cites lines of several checks (its ERROR lines hold no subject), so it has none."""
    entities = extract(original_query, catalog)
    return entities.log_terms if "log" in entities.intents and not entities.survey else ()


def log_excerpts(claim: Mapping[str, Any], checked_bindings: Sequence[Any]) -> list[str]:
    """The verified excerpts of this claim that cite query_logs."""
    logs = [
        checked
        for checked in checked_bindings
        if isinstance(checked, Mapping) and checked.get("tool_name") == ToolName.QUERY_LOGS
    ]
    return verified_excerpts(claim, logs)


def searched_words(claim: Mapping[str, Any], summary: Sequence[Any]) -> list[SearchedWords]:
    """The words of the ranked log searches whose lines this claim cites."""
    searched = {
        entry.get("source_invocation_id"): entry.get("searched")
        for entry in summary
        if isinstance(entry, Mapping) and isinstance(entry.get("searched"), str)
    }
    cited = [
        b.get("source_invocation_id")
        for b in _as_list(claim.get("evidence_bindings"))
        if isinstance(b, Mapping)
    ]
    return [
        SearchedWords(str(searched[i])) for i in dict.fromkeys(cited) if str(searched.get(i) or "").strip()
    ]


def off_subject(excerpts: Sequence[str], terms: Sequence[Subject]) -> list[str]:
    """The excerpts of a claim whose cited log lines hold none of the question's log terms. Lines
    cited beside a line that holds one are its context (what the service logged just before the
    problem first showed), not an answer without the subject."""
    if not terms:
        return []
    off = [excerpt for excerpt in excerpts if not any(term.matches(excerpt) for term in terms)]
    return off if len(off) == len(excerpts) else []


def check_claim(
    claim: Mapping[str, Any],
    excerpts: Sequence[str],
    zh: bool,
    scope: tuple[Sequence[str], Sequence[Subject]] = ((), ()),
) -> tuple[JSON, list[JSON], bool]:
    """(claim_check, facts_checked rows, partly): `partly` when the claim fails only on numbers or
    identifiers its excerpts lack (a binding, scope or negation failure makes it unusable).

    `scope`: (the claim's verified query_logs excerpts, the question's log terms and the words of
    the ranked searches it cites). An observation whose cited log lines do not hold the question's
    subject does not answer the question."""
    claim_id = str(claim.get("claim_id", ""))
    claim_type = claim.get("claim_type")
    text = claim.get("claim_text") if isinstance(claim.get("claim_text"), str) else ""
    assert isinstance(text, str)
    negative = claim_type == ClaimType.NEGATIVE_OBSERVATION
    facts = critical_facts(text)
    missing = unsupported(facts, excerpts, negative_claim=negative)
    rows = [
        {"claim_id": claim_id, "fact": fact.text, "kind": fact.kind, "supported": fact not in missing}
        for fact in facts
    ]
    reason = ""
    if claim_type not in _NARROW_TYPES:
        reason = (
            f"claim_type {claim_type!r} 无法由摘录直接推出"
            if zh
            else f"claim_type {claim_type!r} is not derivable"
        )
    elif not text.strip():
        reason = "claim_text 为空" if zh else "empty claim_text"
    elif not excerpts:
        reason = "没有通过 Gatekeeper 校验的证据绑定" if zh else "no binding passed the Gatekeeper"
    elif is_overstatement(text):
        reason = (
            "过度表达：把查询无结果说成了问题不成立"
            if zh
            else "over-statement beyond what the query returned"
        )
    elif negative and not has_scoped_negative_phrase(text):
        reason = (
            "negative_observation 必须表述为“当前查询未检索到…”"
            if zh
            else "a negative_observation must say the query found no matching evidence"
        )
    elif negative and not all(is_no_evidence_text(excerpt) for excerpt in excerpts):
        reason = (
            "negative_observation 只能由 $.no_evidence 支撑"
            if zh
            else "a negative_observation needs $.no_evidence"
        )
    elif claim_type == ClaimType.OBSERVATION and off_subject(*scope):
        names = ", ".join(term.name for term in scope[1])
        reason = (
            f"范围不符：引用的日志行不包含所查询的主题（{names}）"
            if zh
            else f"out of scope: the cited log lines do not contain the queried subject ({names})"
        )
    elif missing:
        listed = ", ".join(fact.text for fact in missing)
        reason = f"摘录不支持：{listed}" if zh else f"not in the verified excerpts: {listed}"
    supported = not reason
    only_facts = reason.startswith(("摘录不支持", "not in the verified"))
    partly = only_facts and all(fact.kind != "negation" for fact in missing)
    if supported:
        reason = (
            f"{len(facts)} 个关键事实均见于已核验摘录"
            if zh
            else f"all {len(facts)} critical facts are in the verified excerpts"
        )
    check = {
        "claim_id": claim_id,
        "supported": supported,
        "reason": reason,
        "unsupported_facts": [fact.text for fact in missing],
    }
    return check, rows, partly


def verify(verifier_input: Mapping[str, Any], catalog: CatalogView | None = None) -> JSON:
    """The verdict dict for one round."""
    query = verifier_input.get("original_query")
    query = query if isinstance(query, str) else ""
    zh = bool(_CJK.search(query))
    terms = subject_terms(query, catalog)
    parse_status = _as_map(verifier_input.get("executor_output_parse_status")).get("status")
    structured = _as_map(verifier_input.get("executor_structured_output"))
    gatekeeper = _as_map(verifier_input.get("gatekeeper_result"))
    severity = gatekeeper.get("severity", Severity.NONE) if gatekeeper else Severity.REJECT
    checked_bindings = _as_list(gatekeeper.get("checked_bindings"))
    claims = [claim for claim in _as_list(structured.get("claims")) if isinstance(claim, Mapping)]

    claim_checks: list[JSON] = []
    facts_checked: list[JSON] = []
    hard_failures = 0  # claims not even partly grounded: they rule out LOW_CONFID
    summary = _as_list(verifier_input.get("tool_trace_summary"))
    for claim in claims:
        subjects: list[Subject] = [*terms, *searched_words(claim, summary)] if terms else []
        scope = (log_excerpts(claim, checked_bindings), subjects)
        check, rows, partly = check_claim(claim, verified_excerpts(claim, checked_bindings), zh, scope)
        claim_checks.append(check)
        facts_checked.extend(rows)
        if not check["supported"] and not partly:
            hard_failures += 1

    total = len(facts_checked)
    supported_facts = sum(1 for row in facts_checked if row["supported"])
    supported_claims = sum(1 for check in claim_checks if check["supported"])
    groundedness = supported_facts / total if total else (supported_claims / len(claims) if claims else 0.0)

    verdict: Verdict
    if parse_status != "valid":
        verdict = Verdict.REJECT
        rationale = "Executor 输出解析失败" if zh else "the executor output did not parse"
    elif not claims:
        verdict = Verdict.REJECT
        rationale = "没有可核验的 claim" if zh else "no claims to verify"
    elif supported_claims == len(claims):
        if severity == Severity.NONE:
            verdict = Verdict.PASS
        else:
            verdict = Verdict.REJECT if severity == Severity.REJECT else Verdict.LOW_CONFID
        rationale = (
            f"{supported_claims} 条 claim 的关键事实均由已核验摘录支撑；Gatekeeper severity={severity}"
            if zh
            else f"all {supported_claims} claims follow from verified excerpts; "
            f"gatekeeper severity={severity}"
        )
    elif supported_claims > 0 and not hard_failures and severity != Severity.REJECT:
        verdict = Verdict.LOW_CONFID
        rationale = (
            f"{supported_claims}/{len(claims)} 条 claim 可由摘录推出，其余含摘录不支持的事实"
            if zh
            else f"{supported_claims}/{len(claims)} claims follow from the excerpts; "
            "the rest state unsupported facts"
        )
    else:
        verdict = Verdict.REJECT
        failing = "; ".join(f"{c['claim_id']}: {c['reason']}" for c in claim_checks if not c["supported"])
        rationale = f"存在无法由已核验摘录推出的 claim：{failing}" if zh else f"unsupported claims: {failing}"
    return {
        "verdict": verdict,
        "groundedness_score": round(groundedness, 4),
        "critical_fact_count": total,
        "claim_checks": claim_checks,
        "facts_checked": facts_checked,
        "rationale": rationale,
    }


class OfflineVerifier:
    def __init__(self, *, catalog: ServiceCatalog | None = None) -> None:
        self._catalog = catalog

    async def verify(self, verifier_input: JSON, deadline: Deadline) -> StageOutput:
        deadline.check()
        view = await catalog_view(self._catalog, str(verifier_input.get("original_query", "")))
        return StageOutput(verify(verifier_input, view), PROMPT_VERSION)
