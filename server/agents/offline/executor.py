"""OfflineExecutor: runs exactly the calls the question asks for and states what they returned.

It never loosens a query: every planned call runs once, and a no-evidence result becomes a
negative_observation about that exact query — no dropped service, no looser keyword. The one
exception is time: a survey's log check that found nothing in its default last hour looks 6 h, 24 h
and then all the way back (widening.py), and the call kept says which window it ran with.
"""

from __future__ import annotations

import contextlib
import json
import weakref
from collections.abc import Mapping, Sequence

from evigate.rules.enums import CallStatus, ClaimType, EvidenceStatus, ToolName
from evigate.server.agents.base import JSON, ExecutorOutput, ExecutorTask
from evigate.server.agents.offline import claims as c
from evigate.server.agents.offline import cluster_calls, dependency, relevance_calls, signal_calls, widening
from evigate.server.agents.offline.calls import (
    MAX_TERMS,
    PlannedCall,
    describe_call,
    plan_calls,
)
from evigate.server.agents.offline.survey import follow_up_calls, survey_gaps
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.services import ServiceCatalog
from evigate.server.sources.signals import SignalCatalog
from evigate.server.tools.calls import ToolBox, ToolCallResult
from evigate.server.understanding.entities import catalog_view, extract
from evigate.server.understanding.vocabulary import LogTerm

PROMPT_VERSION = "offline-executor-v2"
MAX_CLAIMS = 2  # a narrow question: usually 1 claim, at most 2


def tool_names(tools: ToolBox) -> frozenset[str]:
    """The tools this session may call (a survey runs the checks that exist, names the others)."""
    names = set()
    for schema in tools.schemas():
        function = schema.get("function") if isinstance(schema, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return frozenset(names)


class OfflineExecutor:
    def __init__(
        self,
        *,
        catalog: ServiceCatalog | None = None,
        signals: SignalCatalog | None = None,
        cluster: ClusterSource | None = None,
    ) -> None:
        self._catalog = catalog
        self._signals = signals  # set when a Prometheus is configured: metric questions query it
        self._cluster = cluster  # set when a cluster source is configured (cluster_calls.py)
        # The results of earlier rounds, per session ToolBox: a retry round rebuilds its claims from
        # them instead of querying again.
        self._recorded: weakref.WeakKeyDictionary[ToolBox, list[ToolCallResult]] = weakref.WeakKeyDictionary()

    def _remember(self, tools: ToolBox, results: Sequence[ToolCallResult]) -> None:
        # A ToolBox that cannot be weakly referenced is not remembered: its retry rounds query again.
        with contextlib.suppress(TypeError):
            self._recorded.setdefault(tools, []).extend(results)

    def _earlier(self, tools: ToolBox) -> list[ToolCallResult]:
        try:
            return list(self._recorded.get(tools, []))
        except TypeError:
            return []

    async def execute(self, task: ExecutorTask) -> ExecutorOutput:
        view = await catalog_view(self._catalog, task.query)
        entities = extract(task.query, view)
        available = tool_names(task.tools)
        planned = plan_calls(entities, task.query, available)
        planned = signal_calls.metric_calls(task.query, entities, self._signals, planned)
        names = await cluster_calls.names_of(self._cluster)
        planned = cluster_calls.merged(planned, cluster_calls.plan(task.query, names), names)
        planned += relevance_calls.relevance_calls(entities, task.query, available)
        language = "en" if task.language == "en" else "zh"
        if not planned:
            missing = (
                "问题中没有可查询的服务、告警名称或日志关键字，未调用工具。"
                if language == "zh"
                else "The question names no service, alert name or log term to query; no tool was called."
            )
            data = c.evidence([], [missing], [])
            return ExecutorOutput(json.dumps(data, ensure_ascii=False), PROMPT_VERSION, ())

        recorded = self._earlier(task.tools)
        results: list[tuple[PlannedCall, ToolCallResult]] = []
        fresh: list[ToolCallResult] = []

        made: list[ToolCallResult] = []  # every call's result in call order, widened ones too

        async def call_once(call: PlannedCall) -> ToolCallResult:
            task.deadline.check()
            result = _find_recorded(recorded, call)
            if result is None:
                # Only a call never made, or one that failed, reaches the tools (same arguments).
                result = await task.tools.call(call.tool_name, call.arguments, task.deadline)
                fresh.append(result)
            made.append(result)
            return result

        async def run(calls: Sequence[PlannedCall]) -> None:
            for planned_call in calls:
                call, result = planned_call, await call_once(planned_call)
                if widening.widenable(call, result, entities.names_window, task.query):
                    call, result = await widening.widen(call, result, call_once)
                results.append((call, result))
                unlevelled = widening.every_level(
                    call, result, entities.level is not None, entities.names_window
                )
                if unlevelled is not None:
                    results.append((unlevelled, await call_once(unlevelled)))
                severe = widening.rare_severe(call, result, available)
                if severe is not None:
                    found = await call_once(severe)
                    if c.outcome(found, c.refs_of(found)) == EvidenceStatus.SUPPORTED:
                        results.append((severe, found))

        await run(planned)
        await run(dependency.follow_up_calls(task.query, entities, results, view, available))
        await run(relevance_calls.first_calls(task.query, results, available))
        anchored = "log" in entities.intents and not entities.survey  # as verifier.subject_terms
        await run(relevance_calls.before_calls(task.query, results, available, anchored))
        if entities.survey:
            await run(follow_up_calls(results, available, task.query))
        self._remember(task.tools, fresh)

        unqueried = entities.log_terms[MAX_TERMS:] if "log" in entities.intents else ()
        data = build_evidence(results, language, unqueried)
        if entities.survey:
            gaps = survey_gaps(entities, available, self._signals is not None, language)
            data["missing_info"].extend(gaps)
        return ExecutorOutput(json.dumps(data, ensure_ascii=False), PROMPT_VERSION, tuple(made))


def build_evidence(
    results: Sequence[tuple[PlannedCall, ToolCallResult]],
    language: str,
    unqueried: Sequence[LogTerm] = (),
) -> JSON:
    """executor_evidence_v2 from the calls made: one claim per call, bindings copied from the refs.

    A log line is cited only when it holds the queried term: lines a query returned without the
    question's subject are never stated as the answer. Terms of the question that no call
    searched are named in missing_info."""
    claims: list[JSON] = []
    context: list[JSON] = []  # what the service logged before the symptom: a finding of its own
    missing: list[str] = []
    actions: list[JSON] = []
    zh = language == "zh"
    for call, result in results:
        refs = c.refs_of(result)
        state = c.outcome(result, refs)
        if call.purpose == "problem" and state != EvidenceStatus.SUPPORTED:
            continue  # no runbook was asked for: finding none (or none configured) is no finding
        claim_id = f"claim-{len(claims) + 1}"
        if call.purpose in relevance_calls.GATHERED:
            # a ranking, a first occurrence, the lines before it: what they found, never an absence
            found = relevance_calls.cited(call, refs) if state == EvidenceStatus.SUPPORTED else []
            if found:
                text = relevance_calls.observation_text(call, found, language)
                text = c.safe_text(text, [ref.text for ref in found], negative=False, language=language)
                (context if call.purpose in relevance_calls.CONTEXT else claims).append(
                    c.claim(claim_id, ClaimType.OBSERVATION, text, [c.binding(result, ref) for ref in found])
                )
            continue
        if state == EvidenceStatus.SUPPORTED:
            positive = [ref for ref in refs if ref.raw_path != "$.no_evidence"]
            if call.tool_name == ToolName.QUERY_LOGS and call.term is not None:
                term = call.term
                positive = [ref for ref in positive if term.matches(ref.text)]
                if not positive:
                    missing.append(c.off_subject_text(call, term, language))
                    continue
            if call.purpose == "survey" and call.tool_name == ToolName.QUERY_METRICS:
                positive = sorted(positive, key=c.alert_rank)  # firing, most severe, first
            positive = positive[: c.MAX_LIST_BINDINGS if call.purpose == "list" else c.MAX_BINDINGS]
            text = c.observation_text(call, result, positive, language)
            text = c.safe_text(text, [ref.text for ref in positive], negative=False, language=language)
            claims.append(
                c.claim(claim_id, ClaimType.OBSERVATION, text, [c.binding(result, ref) for ref in positive])
            )
        elif state == EvidenceStatus.NO_EVIDENCE:
            ref = next(ref for ref in refs if ref.raw_path == "$.no_evidence")
            text = c.negative_text(call, ref.text, language)
            text = c.safe_text(text, [ref.text], negative=True, language=language)
            claims.append(c.claim(claim_id, ClaimType.NEGATIVE_OBSERVATION, text, [c.binding(result, ref)]))
        else:
            missing.append(c.missing_text(call, result, language))
            actions.append(
                {
                    "action_text": f"稍后重试 {describe_call(call)}"
                    if zh
                    else f"Retry {describe_call(call)} later",
                    "reason": "该工具调用失败，结果未知"
                    if zh
                    else "the tool call failed, so its result is unknown",
                }
            )
    queried = {call.term.name for call, _ in results if call.term is not None}
    missing.extend(c.unqueried_text(term, language) for term in unqueried if term.name not in queried)
    kept = [*cap_claims(claims, language), *context]
    kept = [{**claim, "claim_id": f"claim-{i}"} for i, claim in enumerate(kept, start=1)]
    return c.evidence(kept, missing, actions)


def cap_claims(claims: list[JSON], language: str) -> list[JSON]:
    """At most MAX_CLAIMS claims (docs/design.md §2.3): beyond that, claims of one type become one claim
    with all their bindings (the cap limits claims, never bindings)."""
    if len(claims) <= MAX_CLAIMS:
        return claims
    merged: dict[str, JSON] = {}
    for claim in claims:
        kind = claim["claim_type"]
        if kind not in merged:
            merged[kind] = {**claim, "evidence_bindings": list(claim["evidence_bindings"])}
            continue
        into = merged[kind]
        joiner = "" if language == "zh" else " "
        into["claim_text"] = f"{into['claim_text']}{joiner}{claim['claim_text']}"
        into["evidence_bindings"].extend(claim["evidence_bindings"])
    return [{**claim, "claim_id": f"claim-{i}"} for i, claim in enumerate(merged.values(), start=1)]


def _find_recorded(recorded: Sequence[ToolCallResult], call: PlannedCall) -> ToolCallResult | None:
    for result in reversed(recorded):
        same = result.tool_name == call.tool_name and dict(result.arguments) == call.arguments
        if same and result.status == CallStatus.SUCCESS:
            return result
    return None
