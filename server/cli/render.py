"""Readable text for the `evigate` client commands (the JSON form comes from server.codec)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

from evigate.server.codec import enum_word
from evigate.v1 import (
    chat_service_pb2,
    evidence_pb2,
    feedback_service_pb2,
    gatekeeper_pb2,
    session_pb2,
    trace_service_pb2,
    verdict_pb2,
)

INDENT = "    "


def _enum(message: Any, field: str) -> str:
    desc = message.DESCRIPTOR.fields_by_name[field].enum_type
    return enum_word(desc, getattr(message, field)) or "-"


def evidence(ev: evidence_pb2.ExecutorEvidence, indent: str = "") -> list[str]:
    lines = []
    for claim in ev.claims:
        lines.append(f"{indent}[{claim.claim_id}] {_enum(claim, 'claim_type')}: {claim.claim_text}")
        for binding in claim.evidence_bindings:
            source = binding.source_invocation_id if binding.HasField("source_invocation_id") else "?"
            lines.append(f"{indent}{INDENT}↳ {binding.tool_name} #{source} {binding.raw_path}")
            lines.append(f"{indent}{INDENT}  “{binding.evidence_excerpt}”")
    for item in ev.missing_info:
        lines.append(f"{indent}missing: {item}")
    return lines or [f"{indent}(no claims)"]


def gatekeeper(result: gatekeeper_pb2.GatekeeperResult, indent: str = "") -> str:
    lines = [
        f"{indent}gatekeeper: {_enum(result, 'status')} (severity {_enum(result, 'severity')}, "
        f"{result.rule_set_version or 'rules ?'})"
    ]
    for checked in result.checked_bindings:
        source = checked.source_invocation_id if checked.HasField("source_invocation_id") else "?"
        note = " back-filled" if checked.backfilled else ""
        where = f"{checked.tool_name} #{source} {checked.raw_path}{note}"
        status = _enum(checked, "status")
        lines.append(
            f"{indent}{INDENT}{status}: {checked.claim_id} binding {checked.binding_index} → {where}"
        )
    for kind, issues in (("error", result.errors), ("warning", result.warnings)):
        for issue in issues:
            severity = _enum(issue, "severity")
            lines.append(
                f"{indent}{INDENT}{kind} {issue.rule_id} ({severity}) {issue.claim_id}: {issue.message}"
            )
    return "\n".join(lines)


def verdict(v: verdict_pb2.Verdict, indent: str = "") -> str:
    lines = [f"{indent}verdict: {_enum(v, 'verdict')} (groundedness {v.groundedness_score:.2f})"]
    for check in v.claim_checks:
        mark = "supported" if check.supported else "NOT supported"
        lines.append(f"{indent}{INDENT}{check.claim_id}: {mark} — {check.reason}")
    if v.rationale:
        lines.append(f"{indent}{INDENT}rationale: {v.rationale}")
    return "\n".join(lines)


def chat_response(r: chat_service_pb2.ChatResponse) -> str:
    lines = []
    if r.status == session_pb2.SESSION_STATUS_SUCCESS:
        lines.append(r.answer)
        if r.HasField("verdict"):
            lines.append("")
            language = f"   language: {r.language}" if r.language else ""
            lines.append(f"verdict: {_enum(r.verdict, 'verdict')}{language}")
    else:
        lines.append(f"session failed: {r.failure_reason or 'unknown reason'}")
    lines.append(f"session: {r.session_id}   (replay: evigate trace {r.session_id})")
    return "\n".join(lines)


def stage_event(e: chat_service_pb2.StreamChatResponse) -> str:
    kind = e.WhichOneof("event")
    tag = f"[round {e.round}] " if e.round else ""
    if kind == "plan":
        plan = e.plan
        steps = "; ".join(plan.plan)
        skill = plan.selected_skill if plan.HasField("selected_skill") else "(none)"
        return f"▶ planner: skill {skill} — {steps}"
    if kind == "tool_invocation":
        inv = e.tool_invocation
        details = inv.retrieval_details
        refs = ", ".join(ref.raw_path for ref in details.evidence_refs)
        return (
            f"▶ {tag}tool {inv.tool_name} #{inv.id}: {_enum(inv, 'status')}, "
            f"{_enum(details, 'evidence_status')} [{refs}]"
        )
    if kind == "executor_evidence":
        return "\n".join([f"▶ {tag}executor:", *evidence(e.executor_evidence, INDENT)])
    if kind == "gatekeeper_result":
        return "▶ " + tag + gatekeeper(e.gatekeeper_result).lstrip()
    if kind == "verdict":
        return "▶ " + tag + verdict(e.verdict)
    if kind == "composer_output":
        return "▶ composer: " + e.composer_output.answer_summary
    if kind == "result":
        return "\n" + chat_response(e.result)
    return f"▶ {kind}"


def trace(t: session_pb2.Trace) -> str:
    s = t.session
    lines = [
        f"session {s.session_id}  {_enum(s, 'status')}  {s.create_time.ToJsonString()}",
        f"query: {s.query}",
        f"agents: {t.agent_backend or '?'}   feedback: {_enum(t, 'feedback')}"
        + (f"   case: {t.case_id}" if t.case_id else ""),
    ]
    if t.HasField("planner_plan"):
        plan = t.planner_plan
        skill = plan.selected_skill if plan.HasField("selected_skill") else "(none)"
        lines += ["", f"plan (skill {skill}):", *(f"{INDENT}- {step}" for step in plan.plan)]
    if t.stage_backends and len(set(t.stage_backends.values())) > 1:
        lines.append("stage backends: " + ", ".join(f"{k}={v}" for k, v in t.stage_backends.items()))
    if t.stage_notes:
        lines += ["", "stage notes:"]
        lines += [
            f"{INDENT}{n.stage}"
            + (f" (round {n.round})" if n.round else "")
            + f": {n.kind}"
            + (f" — {n.detail}" if n.detail else "")
            for n in t.stage_notes
        ]
    lines += ["", "tool calls:"]
    for inv in t.tool_invocations:
        refs = inv.retrieval_details.evidence_refs
        lines.append(
            f"{INDENT}#{inv.id} {inv.tool_name} {_enum(inv, 'status')} "
            f"{_enum(inv.retrieval_details, 'evidence_status')} {_enum(inv.retrieval_details, 'match_level')}"
        )
        for ref in refs:
            lines.append(f"{INDENT}{INDENT}{ref.raw_path}: {ref.text}")
    for r in t.rounds:
        lines += ["", f"round {r.round}: parse {_enum(r.parse_status, 'status')}"]
        lines += evidence(r.executor_output, INDENT)
        lines.append(gatekeeper(r.gatekeeper_result, INDENT))
        lines.append(verdict(r.verdict, INDENT))
        if r.verdict_override_reason:
            lines.append(
                f"{INDENT}proposed {_enum(r, 'proposed_verdict')}, lowered: {r.verdict_override_reason}"
            )
    for finding in t.answer_guard_findings:
        lines.append(f"guard: {finding.action} “{finding.phrase}” → {finding.safe_phrasing}")
    for rejection in t.answer_check_rejections:
        lines += ["", f"answer check refused composer output {rejection.attempt} (never shown):"]
        lines += refused_output(rejection, INDENT)
    if t.answer_check_rejections:
        lines.append(f"answer source: {t.answer_source}")
    if t.HasField("evidence_score"):
        lines += ["", f"evidence score: {t.evidence_score.evidence_score}"]
        for factor in t.evidence_score.factors:
            if factor.source != "llm":
                lines.append(f"{INDENT}{factor.delta:+d} {factor.name}: {factor.description}")
        lines += llm_opinion(t.evidence_score)
    if t.HasField("library_case"):
        lines += ["", *case_lines(t.library_case)]
    if s.failure_reason:
        lines += ["", f"failed: {s.failure_reason}"]
    if t.composer_output.sentences:
        lines += ["", "answer sentences:", *answer_sentences(t.composer_output.sentences, INDENT)]
    lines += ["", "answer:", s.answer or "(none)"]
    return "\n".join(lines)


def answer_sentences(sentences: Iterable[verdict_pb2.AnswerSentence], indent: str = "") -> list[str]:
    """One line per sentence: its place, kind, the claims it is bound to (a sentence bound to none
    that is no fixed line says so) and its text, then each rule that refused it."""
    lines = []
    for index, sentence in enumerate(sentences):
        bound = [*sentence.claim_ids, *sentence.hypothesis_ids]
        ids = ", ".join(bound) or (f"fixed line {sentence.fixed_line}" if sentence.fixed_line else "NO CLAIM")
        refused = "; ".join(f"{v.rule_id} “{v.token}”" for v in sentence.violations)
        line = f"{indent}[{index}] {_enum(sentence, 'kind')} ({ids}): {sentence.text}"
        lines.append(f"{line}   ✗ refused: {refused}" if refused else line)
    return lines


def refused_output(rejection: verdict_pb2.AnswerCheckRejection, indent: str = "") -> list[str]:
    """A refused Composer output: its sentences, each with the rules that refused it, then the
    refusals of the answer as a whole (or, for an output of plain text, its text and every refusal)."""
    output = rejection.composer_output
    if not output.sentences:
        lines = [f"{indent}{output.user_facing_answer}"]
        return lines + [f"{indent}{v.rule_id} in {v.field}: “{v.token}”" for v in rejection.violations]
    lines = answer_sentences(output.sentences, indent)
    whole = [v for v in rejection.violations if not v.field.startswith("sentences[")]
    return lines + [f"{indent}answer: {v.rule_id} in {v.field}: “{v.token}”" for v in whole]


def llm_opinion(score: verdict_pb2.EvidenceScore) -> list[str]:
    """The LLM opinion beside the score (its factors have delta 0), and what code contradicted."""
    opinion = MessageToDict(score.llm_opinion) if score.HasField("llm_opinion") else None
    if not isinstance(opinion, dict):
        return []
    lines = [f"llm opinion ({opinion.get('model', '?')}, {opinion.get('prompt_version', '?')}; not scored):"]
    for name in ("has_root_cause", "has_solution", "answers_the_question", "states_only_verified_facts"):
        item = opinion.get(name)
        if isinstance(item, dict):
            word = "yes" if item.get("value") else "no"
            note = "" if item.get("believed", True) else "  [disagrees with code: not believed]"
            lines.append(f"{INDENT}{name}: {word} — {item.get('reason', '')}{note}")
    for disagreement in opinion.get("disagreements") or []:
        if isinstance(disagreement, dict):
            marks = "; ".join(str(m) for m in disagreement.get("code_marks") or [])
            lines.append(f"{INDENT}disagreement on {disagreement.get('item')}: code found {marks}")
    return lines


def case_lines(c: session_pb2.Case) -> list[str]:
    lines = [
        f"case {c.case_id}" + ("  (retired)" if c.retired else ""),
        f"{INDENT}fault category: {c.fault_category}",
        f"{INDENT}error code: {c.error_code or '(none)'}",
        f"{INDENT}services: {', '.join(c.services) or '(none)'}",
        f"{INDENT}alerts: {', '.join(c.alert_names) or '(none)'}",
    ]
    return lines


def cases(r: trace_service_pb2.ListCasesResponse) -> str:
    if not r.cases:
        return "(no cases)"
    lines = [f"{'CASE':36}  {'CATEGORY':20} {'ERROR CODE':40} {'SERVICES':24} TITLE"]
    for c in r.cases:
        code = c.error_code or "-"
        services = ",".join(c.services) or "-"
        retired = " (retired)" if c.retired else ""
        lines.append(f"{c.case_id:36}  {c.fault_category:20} {code:40} {services:24} {c.title}{retired}")
    return "\n".join(lines)


def feedback(r: feedback_service_pb2.SubmitFeedbackResponse) -> str:
    return r.message + (f" (case {r.case_id})" if r.case_id else "")


def sessions(r: trace_service_pb2.ListSessionsResponse) -> str:
    if not r.sessions:
        return "(no sessions)"
    width = max(len(s.session_id) for s in r.sessions)
    lines = [f"{'SESSION':<{width}}  {'STATUS':8} {'VERDICT':10} {'FEEDBACK':10} {'CREATED (UTC)':19}  QUERY"]
    for s in r.sessions:
        created = s.create_time.ToJsonString()[:19].replace("T", " ")
        labels = f"{_enum(s, 'status'):8} {_enum(s, 'verdict'):10} {_enum(s, 'feedback'):10}"
        lines.append(f"{s.session_id:<{width}}  {labels} {created}  {s.query}")
    if r.next_page_token:
        lines.append(f"more: --page-token {r.next_page_token}")
    return "\n".join(lines)


_HINTS = {
    grpc.StatusCode.UNAUTHENTICATED: "the server wants a valid token: pass --token or set EVIGATE_TOKEN",
    grpc.StatusCode.DEADLINE_EXCEEDED: "the server did not answer in time (raise --timeout)",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "the request or reply is larger than the server allows",
}


def rpc_error(error: grpc.RpcError, args: argparse.Namespace) -> str:
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    target = getattr(args, "target", None) or os.environ.get("EVIGATE_TARGET") or "127.0.0.1:50051"
    if code == grpc.StatusCode.UNAVAILABLE and "database" not in (message or ""):
        return f"cannot reach the server at {target} ({message}); is `evigate serve` running?"
    parts = [f"{code.name.lower().replace('_', ' ')}: {message}"]
    status = _status_details(error)
    for detail in status.details if status is not None else []:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            parts += [
                f"  {v.field}: {v.description}"
                for v in bad.field_violations
                if f"{v.field}: {v.description}" not in (message or "")
            ]
    if code in _HINTS:
        parts.append(f"  ({_HINTS[code]})")
    return "\n".join(parts)


def _status_details(error: grpc.RpcError) -> status_pb2.Status | None:
    trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            return status_pb2.Status.FromString(value)
    return None
