"""The model's calls beyond code's, where code's evidence ranks low (server.agents.llm.routing), and
code's quotes of what they found.

Code reads a term off the question's own words and searches it as written; a log writes
"Traceback" where the question said "Python traceback", "too many clients" where it said
"客户端连接太多". Code ranks the metrics discovery found by the question's words; a question that
shares none with the right name finds none. A model knows how logs and metrics are written: asked
with the calls that ran, what each found and the discovered names, it may add calls. Code runs
them and quotes what they find, claim by claim as for its own calls (the per-sentence check reads
them as any other), after code's claims; a model call that finds nothing adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from evigate.rules.enums import ToolName
from evigate.server.agents.base import JSON, StageNote
from evigate.server.agents.llm import contracts, routing
from evigate.server.agents.llm.anchor import widens
from evigate.server.agents.llm.client import LLMClient
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.executor import build_evidence, cap_claims
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.vocabulary import SearchedWords

MAX_FOLLOW_UP_CALLS = 2
MODEL_ADDED_CALLS = "model_added_calls"
# the evidence of calls the model made (planned or added) quoted in code's claims: what it earned
MODEL_CALLS_QUOTED = "model_calls_quoted"
# asked for calls, the model's reply was not usable (named as a stage fallback is): code's stand
MODEL_UNUSED = "model_unused"
# what a follow-up may call: another term or the log templates, a discovered metric, a runbook
_FOLLOW_UP_TOOLS = (
    ToolName.QUERY_LOGS,
    ToolName.SUMMARIZE_LOGS,
    ToolName.QUERY_PROMQL,
    ToolName.LOOKUP_KNOWLEDGE,
)
# the arguments that name what a log search looks for
_TERM_KEYS = frozenset({"keyword", "pattern", "query"})


def _key(tool: str, arguments: object) -> str:
    return tool + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


FOLLOW_UP_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "log_words": {"type": "array", "items": {"type": "string"}},
        "metric": {"type": "string"},
    },
    "required": ["log_words"],
}


async def ask(
    client: LLMClient,
    query: str,
    results: Sequence[ToolCallResult],
    offered: Sequence[JSON],
    deadline: Deadline,
) -> tuple[list[JSON], StageNote]:
    """The calls the model adds (at most MAX_FOLLOW_UP_CALLS) and a note saying what was kept.
    The model names words a log line prints and a discovered metric; code turns them into calls
    (a reply naming `tool_calls` of the offered follow-up tools is read too). `offered` are the
    session's tool schemas. Raises the client's errors (LLMError)."""
    names = {str(s.get("function", {}).get("name")) for s in offered}
    tools = [t for t in _FOLLOW_UP_TOOLS if t in names]
    # the names discovery found, offered only when no metric matched the question: a log gap
    # left beside them is filled with metric names by a small model
    metric_gap = any(
        r.tool_name == ToolName.QUERY_PROMQL and "about" in r.arguments and not found_evidence(r)
        for r in results
    )
    discovered = routing.discovered_metrics(results) if metric_gap else []
    prompt = load_prompt("followup")
    # a short task on its own: a small model given the tools block and code's calls as JSON copies
    # them into its reply; given the question alone, it writes the words a log line would print
    asked = [query]
    if discovered:
        asked.append(f"discovered_metrics: {', '.join(discovered)}")
    messages = [{"role": "system", "content": prompt.text}, {"role": "user", "content": "\n".join(asked)}]
    data, _ = await client.chat_json(
        "planner", messages, deadline, schema_name="follow_up_calls", schema=FOLLOW_UP_SCHEMA, standalone=True
    )
    proposed = [*calls_of(data, results, discovered), *contracts.planned_calls(data.get("tool_calls"), tools)]
    return kept([c for c in proposed if c["tool_name"] in tools], results, discovered)


def calls_of(data: JSON, results: Sequence[ToolCallResult], discovered: Sequence[str]) -> list[JSON]:
    """The calls a reply's `log_words` and `metric` stand for: each phrasing a log search like
    the term search that found nothing (its service, level and window), the words as `query`,
    ranked (a small model paraphrases a line's words rather than quoting them); the metric a
    `query_promql` of the service queried for it."""
    calls: list[JSON] = []
    words = data.get("log_words")
    term_search = next(
        (r for r in results if r.tool_name == ToolName.QUERY_LOGS and not found_evidence(r)), None
    )
    term_search = term_search or next((r for r in results if r.tool_name == ToolName.QUERY_LOGS), None)
    # a word code tried, or a service's name alone, is no new search
    tried = {
        str(r.arguments[k]).casefold()
        for r in results
        for k in (*_TERM_KEYS, "service")
        if r.arguments.get(k)
    }
    if isinstance(words, list) and term_search is not None:
        base = {k: v for k, v in term_search.arguments.items() if k not in _TERM_KEYS}
        calls += [
            {"tool_name": ToolName.QUERY_LOGS, "arguments": {**base, "query": word.strip()}}
            for word in words
            if isinstance(word, str) and word.strip() and word.strip().casefold() not in tried
        ]
    metric = data.get("metric")
    service = next((r.arguments.get("service") for r in results if r.arguments.get("service")), None)
    if isinstance(metric, str) and metric in discovered and service is not None:
        calls.append({"tool_name": ToolName.QUERY_PROMQL, "arguments": {"service": service, "about": metric}})
    return calls


def kept(
    proposed: Sequence[JSON], results: Sequence[ToolCallResult], discovered: Sequence[str]
) -> tuple[list[JSON], StageNote]:
    """The model's calls that are new: not a call that ran, not one of them loosened, on a service
    code queried, a metric among the discovered names."""
    ran = [{"tool_name": r.tool_name, "arguments": dict(r.arguments)} for r in results]
    services = {str(r.arguments.get("service")) for r in results if r.arguments.get("service")}
    calls: list[JSON] = []
    left_out: dict[str, int] = {}

    def leave(why: str) -> None:
        left_out[why] = left_out.get(why, 0) + 1

    for call in proposed:
        arguments = call["arguments"]
        service = arguments.get("service")
        if call in ran or call in calls:
            leave("that had run")
        elif widens(call, ran):
            leave("that only loosened a call that ran")
        elif services and service is not None and str(service) not in services:
            leave("on another service")
        elif call["tool_name"] == ToolName.QUERY_PROMQL and not _names_discovered(arguments, discovered):
            leave("not among the discovered metrics")
        elif len(calls) < MAX_FOLLOW_UP_CALLS:
            calls.append(call)
    detail = f"the model added {len(calls)} call(s)" + "".join(
        f"; {count} {why} left out" for why, count in left_out.items()
    )
    return calls, StageNote(MODEL_ADDED_CALLS, detail)


def _names_discovered(arguments: JSON, discovered: Sequence[str]) -> bool:
    if "about" in arguments:
        return str(arguments["about"]) in discovered
    query = str(arguments.get("query") or "")
    return any(name in query for name in discovered)


def quote_added(code_evidence: JSON, added: Sequence[ToolCallResult], language: str) -> JSON:
    """Code's evidence with claims quoting what the model's calls (`added`) found: one claim per
    call that found supporting evidence, as the offline Executor words its own, after code's (whose
    negatives stay: what the question's own words found nothing of is still said). A ranked search
    none of whose lines holds most of its words found nothing: a ranking always puts some line
    first."""
    found = [r for r in added if quotable(r)]
    if not found:
        return code_evidence
    calls = [(_planned_call(r), r) for r in found]
    quoted = build_evidence(calls, language)["claims"]
    claims = [*(code_evidence.get("claims") or []), *quoted]
    merged = [{**c, "claim_id": f"claim-{i}"} for i, c in enumerate(claims, start=1)]
    return {**code_evidence, "claims": cap_claims(merged, language)}


def quotable(result: ToolCallResult) -> bool:
    """A model's call code quotes: it found supporting evidence that holds its own words."""
    return found_evidence(result) and holds_its_words(result)


def holds_its_words(result: ToolCallResult) -> bool:
    """Whether a ranked log search (query_logs `query`) found a line holding most of its words;
    true of any other call."""
    words = result.arguments.get("query") if result.tool_name == ToolName.QUERY_LOGS else None
    if not isinstance(words, str) or not words.strip():
        return True
    refs = result.retrieval_details.get("evidence_refs") or []
    searched = SearchedWords(words)
    return any(searched.matches(str(ref.get("text") or "")) for ref in refs if isinstance(ref, dict))


def _planned_call(result: ToolCallResult) -> PlannedCall:
    arguments = dict(result.arguments)
    service, level = arguments.get("service"), arguments.get("level")
    return PlannedCall(
        result.tool_name,
        arguments,
        service=str(service) if service is not None else None,
        level=str(level) if level is not None else None,
    )


def found_evidence(result: ToolCallResult) -> bool:
    return result.status == "success" and result.retrieval_details.get("evidence_status") == "supported"


def new_results(
    code_results: Sequence[ToolCallResult], results: Sequence[ToolCallResult]
) -> list[ToolCallResult]:
    """The results of calls code did not make itself (the model's planned and follow-up calls)."""
    made = {_key(r.tool_name, r.arguments) for r in code_results}
    return [r for r in results if _key(r.tool_name, r.arguments) not in made]
