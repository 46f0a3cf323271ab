"""Rank, then write: a question that asks why something happens ("why is X slow?", "troubleshoot the
503s of X", "X 出了什么问题，原因是什么？") is not answered from its first narrow query alone.

- **Relevance.** The service's log lines are ranked against the question's own words
  (`query_logs` with `query`: BM25 fused with the shipped embedder), and the best few are quoted.
  A survey ranks its window's lines (the last hour, widened to 6 h, 24 h and all the logs hold as
  its other log checks are); a narrow question ranks the window it names, else all the logs. A
  ranking only orders what is there: when it returns nothing, no claim is made of it.
- **What came before.** When a log check of the question's symptom found lines, the lines the
  service wrote in the minute before the earliest of them are read (one bounded query; when the
  symptom had more lines than its query returned, its templates first say when each first showed)
  and quoted as a claim of their own, in the evidence's own words; no link between the two is
  stated. "Earliest found", never "first": a template cut from the lookup may be older.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from evigate.rules.enums import EvidenceStatus, ToolName
from evigate.rules.types import EvidenceRef as Ref
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline.calls import SUMMARIZE_LOGS, SURVEY_WINDOW, PlannedCall
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.cause import asks_cause
from evigate.server.understanding.entities import Entities

RELEVANCE = "relevance"
BEFORE = "before"  # the first line of the symptom with the lines before it
BEFORE_ONLY = "before_only"  # the lines before it alone (a survey: its Verifier holds no subject)
FIRST = "first"
_SPAN_KEYS = ("since", "until")
BEFORE_SPAN = timedelta(minutes=1)
BEFORE_LIMIT = 12
FIRST_LIMIT = 50  # summarize_logs' most
_FIRST = re.compile(r"\bfirst=(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)")
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\s")


def ranking_query(question: str, entities: Entities) -> str:
    """The question's words without the names of its subject (every line is the service's)."""
    text = question
    mentions = [m.mention for m in entities.service_matches] + list(entities.services)
    mentions += list(entities.namespaces)
    for mention in sorted({m for m in mentions if m}, key=len, reverse=True):
        text = re.sub(re.escape(mention), " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def relevance_calls(entities: Entities, question: str, available: Collection[str]) -> list[PlannedCall]:
    """The service's log lines ranked against a cause question (the first service only)."""
    if not entities.services or not asks_cause(question):
        return []
    if available and ToolName.QUERY_LOGS not in available:
        return []
    query = ranking_query(question, entities)
    if not query:
        return []
    service = entities.services[0]
    arguments: dict[str, str] = {"service": service, "query": query}
    if entities.clock is not None:
        arguments.update({"since": entities.clock[0], "until": entities.clock[1]})
    elif entities.window_minutes is not None:
        arguments["since"] = f"{entities.window_minutes}m"
    elif entities.survey:  # the survey's window, widened as its other log checks are
        arguments["since"] = SURVEY_WINDOW
    return [PlannedCall(ToolName.QUERY_LOGS, arguments, service, purpose=RELEVANCE)]


def _moment(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _symptom_checks(
    question: str, results: Sequence[tuple[PlannedCall, ToolCallResult]], available: Collection[str]
) -> list[tuple[PlannedCall, ToolCallResult]]:
    """A cause question's log checks of a symptom (a term of the question) that found lines."""
    if not asks_cause(question) or (available and ToolName.QUERY_LOGS not in available):
        return []
    return [
        (call, result)
        for call, result in results
        if call.term is not None
        and call.service is not None
        and call.tool_name in (ToolName.QUERY_LOGS, SUMMARIZE_LOGS)
        and c.outcome(result, c.refs_of(result)) == EvidenceStatus.SUPPORTED
    ]


def first_calls(
    question: str, results: Sequence[tuple[PlannedCall, ToolCallResult]], available: Collection[str]
) -> list[PlannedCall]:
    """When a symptom's lines were more than its query returned (newest first), the first of them is
    older than any quoted: the service's templates at the query's level say when each first showed."""
    if available and SUMMARIZE_LOGS not in available:
        return []
    for call, result in _symptom_checks(question, results, available):
        raw = result.raw_result or {}
        shown = len(raw.get("logs") or [])
        if call.tool_name != ToolName.QUERY_LOGS or int(raw.get("total") or 0) <= shown:
            continue
        arguments = {"service": call.service, **{k: v for k, v in call.arguments.items() if k in _SPAN_KEYS}}
        if call.level is not None:
            arguments["level"] = call.level
        arguments["limit"] = FIRST_LIMIT  # the rare templates too: the first may be one of them
        return [replace(call, tool_name=SUMMARIZE_LOGS, arguments=arguments, purpose=FIRST)]
    return []


def first_occurrence(call: PlannedCall, result: ToolCallResult) -> datetime | None:
    """The earliest moment a symptom check's evidence shows: a template's `first=`, else the oldest
    quoted line."""
    moments = []
    for ref in c.refs_of(result):
        if ref.raw_path == "$.no_evidence" or (call.term is not None and not call.term.matches(ref.text)):
            continue
        found = _FIRST.search(ref.text) or _STAMP.match(ref.text)
        moment = _moment(found.group(1)) if found else None
        if moment is not None:
            moments.append(moment)
    return min(moments) if moments else None


def before_calls(
    question: str,
    results: Sequence[tuple[PlannedCall, ToolCallResult]],
    available: Collection[str],
    anchored: bool = True,
) -> list[PlannedCall]:
    """For a cause question, the minute of the service's logs before its symptom first showed.
    `anchored`: the claim also quotes that first line (a narrow log question, whose Verifier holds
    every claim's lines to the question's subject)."""
    checks = _symptom_checks(question, results, available)
    if not checks:
        return []
    service = checks[0][0].service
    moments = [first_occurrence(call, result) for call, result in checks if call.service == service]
    found = [m for m in moments if m is not None]
    if not found:
        return []
    first = min(found)
    arguments = {
        "service": service,
        "since": (first - BEFORE_SPAN).isoformat(sep="T"),
        "until": first.isoformat(sep="T"),
        "limit": BEFORE_LIMIT,
    }
    call = checks[0][0]
    purpose = BEFORE if anchored else BEFORE_ONLY
    return [replace(call, tool_name=ToolName.QUERY_LOGS, arguments=arguments, level=None, purpose=purpose)]


GATHERED = frozenset({RELEVANCE, FIRST, BEFORE, BEFORE_ONLY})
CONTEXT = frozenset({BEFORE, BEFORE_ONLY})  # a finding of its own, never merged into the others
MAX_RANKED = 5  # the best-ranked lines quoted


def cited(call: PlannedCall, refs: Sequence[Ref]) -> list[Ref]:
    """The refs a gathered call's claim cites: the best-ranked lines; the lines before the symptom
    that are not the symptom itself; none of a first-occurrence lookup (it only times the next)."""
    found = [ref for ref in refs if ref.raw_path != "$.no_evidence"]
    if call.purpose == RELEVANCE:
        return found[:MAX_RANKED]
    if call.purpose == BEFORE and call.term is not None:
        term = call.term
        # newest first: the last line holding the symptom is its first occurrence
        first = [ref for ref in found if term.matches(ref.text)][-1:]
        before = [ref for ref in found if not term.matches(ref.text)][:MAX_RANKED]
        return [*first, *before] if first and before else []
    if call.purpose == BEFORE_ONLY and call.term is not None:
        term = call.term
        return [ref for ref in found if not term.matches(ref.text)][:MAX_RANKED]
    return []


def _line(ref: Ref) -> str:
    return c.quote(ref.text.split(" | ")[0])


def observation_text(call: PlannedCall, refs: Sequence[Ref], language: str) -> str:
    zh = language == "zh"
    service = call.service or ""
    if call.purpose == BEFORE_ONLY:
        lines = ("；" if zh else "; ").join(f"“{_line(ref)}”" if zh else f'"{_line(ref)}"' for ref in refs)
        if zh:
            return f"{service} 在检索到的最早一条问题日志之前一分钟内记录了：{lines}。"
        return f"In the minute before the earliest line of the problem found, {service} logged: {lines}."
    if call.purpose == BEFORE:
        first, before = refs[0], refs[1:]
        if zh:
            lines = "；".join(f"“{_line(ref)}”" for ref in before)
            said = _line(first)
            return f"{service} 检索到的最早一条问题日志是“{said}”，在此之前一分钟内它记录了：{lines}。"
        lines = "; ".join(f'"{_line(ref)}"' for ref in before)
        shown = _line(first)
        return (
            f'The earliest line of {service} found showing the problem is "{shown}"; '
            f"in the minute before it: {lines}."
        )
    if zh:
        lines = "；".join(f"“{_line(ref)}”" for ref in refs)
        return f"{service} 的日志中与问题最相关的记录：{lines}。"
    lines = "; ".join(f'"{_line(ref)}"' for ref in refs)
    return f"The log lines of {service} most relevant to the question: {lines}."
