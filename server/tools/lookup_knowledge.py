"""lookup_knowledge: runbooks, skill documents and the case library (docs/design.md §6.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import MatchLevel, ToolName
from evigate.server.queries.types import JSON, KnowledgeQuery
from evigate.server.tools import args as tool_args
from evigate.server.tools import refs
from evigate.server.tools.backend import ToolBackend
from evigate.server.tools.tool import Answer, Tool

DEFAULT_LIMIT, MAX_LIMIT = 5, 20


def block_text(item: Mapping[str, Any]) -> str:
    """[skill] title / section: text (source=...; skill=...; matched=...; match=L1 dense=... bm25=...)"""
    head = f"[{refs.text(item.get('kind', ''))}] {refs.text(item.get('title', ''))}"
    if item.get("section"):
        head += f" / {refs.text(item['section'])}"
    extras = refs.other_pairs(item, ("kind", "title", "section", "text"))
    return f"{head}: {refs.text(item.get('text', ''))} ({'; '.join(extras)})"


async def _answer(args: JSON, backend: ToolBackend) -> Answer:
    hits = await backend.lookup_knowledge(
        KnowledgeQuery(query=args["query"], limit=args.get("limit", DEFAULT_LIMIT))
    )
    details = {"retrieval": dict(hits.details)} if hits.details else {}
    if not hits.blocks:
        # The level is part of what was checked: no exact key and no similar enough document; and
        # how it was checked, when the hybrid search fell back to BM25.
        notes: dict[str, str] = {"match_level": MatchLevel.NONE}
        if hits.details.get("degraded"):
            notes["retrieval"] = str(hits.details.get("method", "bm25"))
        return Answer([], 0, MatchLevel.NONE, notes=notes, details=details)
    return Answer(hits.blocks, len(hits.blocks), MatchLevel(hits.match_level), details=details)


TOOL = Tool(
    name=ToolName.LOOKUP_KNOWLEDGE,
    description="Evidence blocks from runbooks, skill documents and the case library. L0 when a key "
    "term (alert name, error code, exception class, pool or skill name) matches exactly, L1 by similar "
    "meaning (embeddings fused with BM25; Chinese and English match each other), otherwise no evidence.",
    properties={
        "query": {**tool_args.STRING, "description": "question or key terms, Chinese or English"},
        "limit": tool_args.limit(DEFAULT_LIMIT, MAX_LIMIT),
    },
    required=("query",),
    answer=_answer,
    item_array="evidence_blocks",
    item_text=block_text,
    no_evidence_message="未找到匹配的知识",
    query_keys=("query",),
)
