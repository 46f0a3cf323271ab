"""A stored trace (TraceRecord) as the session page shows it: plain view records, every text still
untrusted (the templates escape it), nothing here about HTML.

Tool results can be megabytes and sessions hundreds of calls long, so a call's result is shown as
a bounded preview (the whole result is its own page) and nothing walks a result in full."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from evigate.server.usecases.records import InvocationRecord, RoundRecord, TraceRecord
from evigate.server.web import answer as answer_view
from evigate.server.web import highlight, timeline

PREVIEW_CHARS = 4000
# Refs no claim cites are context: a few, each cut short (a call may return 200 long log lines).
UNCITED_REFS = 20
UNCITED_REF_CHARS = 600
CITED_REF_CHARS = 20000
JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RefView:
    anchor: str
    raw_path: str
    segments: list[highlight.Segment]
    cited_by: list[tuple[str, str]]  # (claim label, claim anchor)


@dataclass(frozen=True, slots=True)
class CallView:
    id: int
    anchor: str
    tool_name: str
    status: str
    error: str
    latency_ms: float
    arguments: str
    evidence_status: str
    match_level: str
    refs: list[RefView]
    refs_left_out: int
    preview: str
    truncated: bool
    cited: bool


@dataclass(frozen=True, slots=True)
class BindingView:
    tool_name: str
    invocation_id: str
    raw_path: str
    excerpt: str
    href: str  # the cited ref ("" when it names no recorded call/ref)
    status: str  # the Gatekeeper's word for this binding


@dataclass(frozen=True, slots=True)
class ClaimView:
    claim_id: str
    anchor: str
    claim_type: str
    text: str
    bindings: list[BindingView]


@dataclass(frozen=True, slots=True)
class IssueView:
    kind: str  # error | warning
    rule_id: str
    severity: str
    claim_id: str
    message: str


@dataclass(frozen=True, slots=True)
class RoundView:
    round: int
    anchor: str
    parse_status: str
    parse_detail: str
    claims: list[ClaimView]
    missing_info: list[str]
    gate_status: str
    gate_severity: str
    rule_set: str
    checked: list[JSON]
    issues: list[IssueView]
    verdict: str
    groundedness: str
    claim_checks: list[JSON]
    rationale: str
    proposed_verdict: str
    override_reason: str
    retry_failed_rules: list[str]


@dataclass(frozen=True, slots=True)
class SessionPage:
    session_id: str
    query: str
    language: str
    status: str
    created_at: str
    failure_reason: str
    agent_backend: str
    verdict: str
    skill: str
    selection_reason: str
    plan: list[str]
    answer: list[answer_view.AnswerBlock]  # the structured answer; empty for an answer stored as text
    answer_text: str
    timeline: timeline.Timeline
    stages: list[str]
    calls: list[CallView]
    rounds: list[RoundView]
    score: str
    score_factors: list[JSON]
    rejections: list[JSON]
    answer_source: str
    guard_findings: list[JSON]
    feedback: str
    case_id: str
    can_give_feedback: bool
    extras: dict[str, str] = field(default_factory=dict)


def _dict(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def preview(value: Any, limit: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """Pretty JSON of `value`, cut after `limit` characters without encoding the rest."""
    chunks: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(ensure_ascii=False, indent=1, default=str).iterencode(value):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return "".join(chunks)[:limit], True
    return "".join(chunks), False


def verdict_of(evaluation: JSON | None, rounds: list[RoundRecord] | None = None) -> str:
    verifier = _dict(_dict(evaluation).get("verifier_evaluation"))
    if verifier.get("verdict"):
        return str(verifier["verdict"])
    if rounds:
        return _text(_dict(rounds[-1].verdict).get("verdict"))
    return ""


def _claims(
    round_no: int, output: JSON, checked: list[JSON], ref_anchors: dict[tuple[int, str], str]
) -> list[ClaimView]:
    statuses = {(c.get("claim_id"), c.get("binding_index")): _text(c.get("status")) for c in checked}
    claims = []
    for index, raw in enumerate(_list(output.get("claims"))):
        claim = _dict(raw)
        claim_id = _text(claim.get("claim_id")) or f"#{index + 1}"
        bindings = []
        for b_index, raw_binding in enumerate(_list(claim.get("evidence_bindings"))):
            binding = _dict(raw_binding)
            source = binding.get("source_invocation_id")
            path = _text(binding.get("raw_path"))
            anchor = ref_anchors.get((source, path), "") if isinstance(source, int) else ""
            bindings.append(
                BindingView(
                    _text(binding.get("tool_name")),
                    "?" if source is None else _text(source),
                    path,
                    _text(binding.get("evidence_excerpt")),
                    f"#{anchor}" if anchor else "",
                    statuses.get((claim.get("claim_id"), b_index), ""),
                )
            )
        claims.append(
            ClaimView(
                claim_id,
                f"r{round_no}-c{index}",
                _text(claim.get("claim_type")),
                _text(claim.get("claim_text")),
                bindings,
            )
        )
    return claims


def _issues(gate: JSON) -> list[IssueView]:
    issues = []
    for kind, key in (("error", "errors"), ("warning", "warnings")):
        for raw in _list(gate.get(key)):
            issue = _dict(raw)
            issues.append(
                IssueView(
                    kind,
                    _text(issue.get("rule_id")),
                    _text(issue.get("severity")),
                    _text(issue.get("claim_id")),
                    _text(issue.get("message")),
                )
            )
    return issues


def _round(record: RoundRecord, ref_anchors: dict[tuple[int, str], str]) -> RoundView:
    gate = _dict(record.gatekeeper_result)
    verdict = _dict(record.verdict)
    checked = [_dict(c) for c in _list(gate.get("checked_bindings"))]
    output = _dict(record.executor_output)
    score = verdict.get("groundedness_score")
    return RoundView(
        round=record.round,
        anchor=f"round-{record.round}",
        parse_status=_text(_dict(record.parse_status).get("status")),
        parse_detail=_text(_dict(record.parse_status).get("detail")),
        claims=_claims(record.round, output, checked, ref_anchors),
        missing_info=[_text(m) for m in _list(output.get("missing_info"))],
        gate_status=_text(gate.get("status")),
        gate_severity=_text(gate.get("severity")),
        rule_set=_text(gate.get("rule_set_version")),
        checked=checked,
        issues=_issues(gate),
        verdict=_text(verdict.get("verdict")),
        groundedness=f"{score:.2f}" if isinstance(score, int | float) else "",
        claim_checks=[_dict(c) for c in _list(verdict.get("claim_checks"))],
        rationale=_text(verdict.get("rationale")),
        proposed_verdict=_text(record.proposed_verdict),
        override_reason=record.verdict_override_reason,
        retry_failed_rules=[_text(r) for r in _list(_dict(record.retry_context).get("failed_rules"))],
    )


def _citations(rounds: list[RoundRecord]) -> dict[tuple[int, str], list[tuple[int, int, str, str]]]:
    """(invocation id, raw_path) → [(round, claim index, claim id, excerpt)] over every round."""
    cited: dict[tuple[int, str], list[tuple[int, int, str, str]]] = defaultdict(list)
    for record in rounds:
        for index, raw in enumerate(_list(_dict(record.executor_output).get("claims"))):
            claim = _dict(raw)
            for raw_binding in _list(claim.get("evidence_bindings")):
                binding = _dict(raw_binding)
                source = binding.get("source_invocation_id")
                excerpt = binding.get("evidence_excerpt")
                if isinstance(source, int) and isinstance(excerpt, str):
                    key = (source, _text(binding.get("raw_path")))
                    cited[key].append((record.round, index, _text(claim.get("claim_id")), excerpt))
    return cited


def _call(
    record: InvocationRecord, cited: dict[tuple[int, str], list[tuple[int, int, str, str]]]
) -> CallView:
    details = record.retrieval_details or {}
    refs = []
    uncited = left_out = 0
    for index, raw in enumerate(_list(details.get("evidence_refs"))):
        ref = _dict(raw)
        path = _text(ref.get("raw_path"))
        citing = cited.get((record.id, path), [])
        text = _text(ref.get("text"))
        if not citing:
            uncited += 1
            if uncited > UNCITED_REFS:
                left_out += 1
                continue
            text = text if len(text) <= UNCITED_REF_CHARS else text[:UNCITED_REF_CHARS] + " …"
        refs.append(
            RefView(
                f"ref-{record.id}-{index}",
                path,
                highlight.segments(text[:CITED_REF_CHARS], [c[3] for c in citing]),
                [(f"{claim_id} (round {r})", f"r{r}-c{i}") for r, i, claim_id, _ in citing],
            )
        )
    text, truncated = preview(record.raw_result)
    return CallView(
        id=record.id,
        anchor=f"call-{record.id}",
        tool_name=record.tool_name,
        status=record.status,
        error=record.error or "",
        latency_ms=float(record.latency_ms),
        arguments=json.dumps(record.arguments, ensure_ascii=False, indent=1, default=str),
        evidence_status=_text(details.get("evidence_status")),
        match_level=_text(details.get("match_level")),
        refs=refs,
        refs_left_out=left_out,
        preview=text,
        truncated=truncated,
        cited=any(r.cited_by for r in refs),
    )


def session_page(record: TraceRecord) -> SessionPage:
    s = record.session
    cited = _citations(record.rounds)
    calls = [_call(i, cited) for i in record.invocations]
    ref_anchors = {(c.id, r.raw_path): r.anchor for c in calls for r in c.refs}
    rounds = [_round(r, ref_anchors) for r in record.rounds]
    final_claims = rounds[-1].claims if rounds else []
    links = {
        c.claim_id: answer_view.claim_link(
            c.claim_id,
            c.anchor,
            [(f"#{b.invocation_id} {b.raw_path}", b.href, b.excerpt) for b in c.bindings],
        )
        for c in final_claims
    }
    final_round = rounds[-1].anchor if rounds else ""
    sentences = answer_view.sentence_views(_dict(s.composer_output).get("sentences"), links, final_round)
    extras = _dict(s.extras)
    evaluation = _dict(s.self_evaluation)
    plan = _dict(s.planner_plan)
    latencies = _list(extras.get("stage_latencies"))
    check = _dict(extras.get("answer_check"))
    score = evaluation.get("evidence_score")
    return SessionPage(
        session_id=s.session_id,
        query=s.query,
        language=s.language,
        status=s.status,
        created_at=s.created_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
        failure_reason=s.failure_reason or "",
        agent_backend=_text(_dict(s.meta).get("agent_backend")),
        verdict=verdict_of(s.self_evaluation, record.rounds),
        skill=_text(plan.get("selected_skill")),
        selection_reason=_text(plan.get("selection_reason")),
        plan=[_text(step) for step in _list(plan.get("plan"))],
        answer=answer_view.blocks(sentences),
        answer_text=s.answer or "",
        timeline=timeline.build(latencies, record.invocations, s.created_at),
        stages=list(dict.fromkeys(_text(_dict(e).get("stage")) for e in latencies)),
        calls=calls,
        rounds=rounds,
        score="" if score is None else _text(score),
        score_factors=[_dict(f) for f in _list(evaluation.get("factors"))],
        rejections=[_dict(r) for r in _list(check.get("rejections"))],
        answer_source=_text(check.get("answer_source")),
        guard_findings=[_dict(f) for f in _list(extras.get("answer_guard_findings"))],
        feedback=s.feedback or "",
        case_id=record.case_id or "",
        can_give_feedback=s.status == "SUCCESS" and bool(s.answer),
    )
