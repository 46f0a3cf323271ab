"""Evidence ref texts: one line per returned item, containing every field of it.

The Gatekeeper checks excerpts against these texts (token overlap, and every number / identifier
must occur), so an excerpt built from any field of an item must find that field here. Each tool
writes its own item line (its module) from these pieces; the no-evidence ref is the same for all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from evigate.server.queries.types import JSON

NO_EVIDENCE_PATH = "$.no_evidence"


def text(value: Any) -> str:
    """A value on one line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return " ".join(str(value).split())


def pairs(prefix: str, value: Any) -> Iterator[str]:
    """key=value for a scalar, key.sub=value for a nested object, key=[a, b] for a list."""
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from pairs(f"{prefix}.{key}", sub)
    elif isinstance(value, list):
        yield f"{prefix}=[{', '.join(text(v) for v in value)}]"
    else:
        yield f"{prefix}={text(value)}"


def other_pairs(item: Mapping[str, Any], shown: Sequence[str]) -> list[str]:
    """The pairs of every field not in `shown`, in the item's order."""
    return [p for key, value in item.items() if key not in shown for p in pairs(key, value)]


def no_evidence(tool: str, message: str, query: str, filters: Mapping[str, str]) -> tuple[JSON, JSON]:
    """The raw result and the single ref of a call that checked and found nothing."""
    parts = [
        f"{tool} returned no evidence",
        "evidence_status=no_evidence",
        f"query={query}",
        *(f"{k}={text(v)}" for k, v in filters.items()),
        "total=0",
        f"message={message}",
    ]
    raw = {
        "no_evidence": {
            "tool": tool,
            "query": query,
            "filters": dict(filters),
            "total": 0,
            "message": message,
        }
    }
    return raw, {"raw_path": NO_EVIDENCE_PATH, "text": "; ".join(parts)}
