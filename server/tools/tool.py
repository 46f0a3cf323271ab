"""A tool is one object: its name and description, its argument schema and validation, the shape
of its result and of its evidence refs, which claim types may cite it, and the function that answers
it against the sources. Tools are registered in server/tools/registry.py; SessionToolBox runs them
all the same way (validation, evidence refs, dedup, recording), so every tool's calls are recorded,
cited and checked alike (docs/design.md §6).

Result shape: a call that found items returns `{<item_array>: items, "total": n, ...}` (a tool may
add keys about the call, e.g. query_logs' skipped_lines) and one evidence
ref per item, `{"raw_path": "$.<item_array>[i]", "text": item_text(item)}`; a call that found
nothing returns the shared `no_evidence` result with its single `$.no_evidence` ref.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules.enums import EvidenceStatus, MatchLevel
from evigate.rules.rule_catalog import ToolCitation
from evigate.server.queries.types import JSON, TimeWindow
from evigate.server.sources.times import display_time
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.backend import ToolBackend

# Arguments a no-evidence ref does not list as filters: `limit` changes no match; the query text
# and the window are stated in their own form.
_NOT_FILTERS = ("limit", "query", "since", "until")


# (question, the services it names) → the argument sets the offline planner calls the tool with
PlanHook = Callable[[str, Sequence[str]], Sequence[JSON]]
# (the call's arguments, its ref texts, the answer's language) → the claim's text
FoundHook = Callable[[JSON, Sequence[str], str], str]
# (the call's arguments, the no-evidence ref's text, the answer's language) → the negative claim's text
NothingHook = Callable[[JSON, str, str], str]


@dataclass(frozen=True)
class OfflineHooks:
    """How the offline agents use a tool they have no code of their own for (all optional): when to
    call it, and how to phrase what it found or that it found nothing. Without `plan` the offline
    planner never calls it; without a phrasing, a claim quotes its items as returned."""

    plan: PlanHook | None = None
    found: FoundHook | None = None
    nothing: NothingHook | None = None


@dataclass(frozen=True)
class Answer:
    """What a tool found: items in result order (at most the query's limit) and how many matched."""

    items: list[JSON]
    total: int
    match_level: MatchLevel = MatchLevel.L0  # of a non-empty answer; an empty one is always none
    window: TimeWindow | None = None  # the window the query covered, named by a no-evidence ref
    notes: Mapping[str, str] = field(default_factory=dict)  # more facts a no-evidence ref states
    # Ref texts written by the tool's own formatter (query_promql: a series' text needs the query's
    # window and unit, which no single item holds); None: item_text of each item.
    texts: Sequence[str] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # more raw-result keys beside the items
    # More retrieval_details entries (lookup_knowledge's "retrieval": method, model, scores); they
    # never replace the entries every tool writes.
    details: Mapping[str, Any] = field(default_factory=dict)


def _unchanged(key: str, text: str) -> str:
    return text


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    properties: Mapping[str, JSON]  # JSON Schema of each argument
    # Runs validated arguments against the sources; raises ToolError when it could not check,
    # ArgumentError when the arguments are unusable (a bad time, say).
    answer: Callable[[JSON, ToolBackend], Awaitable[Answer]]
    item_array: str  # raw result key; items are cited as $.<item_array>[i]
    item_text: Callable[[Mapping[str, Any]], str]  # one line holding every field of an item
    no_evidence_message: str
    query_keys: tuple[str, ...]  # the arguments a no-evidence ref states as its query
    required: tuple[str, ...] = ()
    claim_types: frozenset[str] | None = None  # claim types that may cite this tool; None: any
    clean: Callable[[str, str], str] = _unchanged  # (argument, stripped text) → normalized text
    offline: OfflineHooks = OfflineHooks()  # how the offline agents plan it and phrase its claims

    def schema(self) -> JSON:
        """The OpenAI function-calling schema offered to the LLM Executor."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": dict(self.properties),
                    "required": list(self.required),
                    "additionalProperties": False,
                },
            },
        }

    def normalize(self, arguments: Mapping[str, Any]) -> JSON:
        return tool_args.validate(self.properties, self.required, arguments, self.clean)

    def citation(self) -> ToolCitation:
        """What the Gatekeeper checks a citation of this tool against."""
        return ToolCitation(self.name, self.item_array, self.claim_types)

    def result(self, answer: Answer) -> tuple[JSON, JSON]:
        """raw_result and retrieval_details of a call that found items."""
        texts = answer.texts if answer.texts is not None else [self.item_text(i) for i in answer.items]
        if len(texts) != len(answer.items):
            raise ValueError(f"{self.name}: {len(texts)} ref texts for {len(answer.items)} items")
        ref_list = [{"raw_path": f"$.{self.item_array}[{i}]", "text": text} for i, text in enumerate(texts)]
        details = {
            **answer.details,
            "evidence_status": EvidenceStatus.SUPPORTED,
            "match_level": answer.match_level,
            "evidence_refs": ref_list,
        }
        return {**answer.extra, self.item_array: answer.items, "total": answer.total}, details

    def no_evidence(self, args: JSON, answer: Answer) -> tuple[JSON, JSON]:
        """raw_result and retrieval_details of a call that checked and found nothing."""
        filters = {k: str(v) for k, v in args.items() if k not in _NOT_FILTERS}
        if answer.window is not None and answer.window.since is not None:
            filters["since"] = display_time(answer.window.since)
        if answer.window is not None and answer.window.until is not None:
            filters["until"] = display_time(answer.window.until)
        filters.update(answer.notes)
        query = " ".join(refs.text(args[k]) for k in self.query_keys if k in args) or "*"
        raw, ref = refs.no_evidence(self.name, self.no_evidence_message, query, filters)
        details = {
            **answer.details,
            "evidence_status": EvidenceStatus.NO_EVIDENCE,
            "match_level": MatchLevel.NONE,
            "evidence_refs": [ref],
        }
        return raw, details
