"""Evidence ref texts: one line per returned item, containing every field of it.

The Gatekeeper checks excerpts against these texts (token overlap, and every number / identifier
must occur), so an excerpt built from any field of an item must find that field here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from server.tools.backend import JSON

NO_EVIDENCE_PATH = "$.no_evidence"
ITEM_PATHS = {"query_metrics": "alerts", "query_logs": "logs", "lookup_knowledge": "evidence_blocks"}
NO_EVIDENCE_MESSAGES = {
    "query_metrics": "未找到匹配的告警",
    "query_logs": "未找到匹配的日志",
    "lookup_knowledge": "未找到匹配的知识",
}
_QUERY_KEYS = {
    "query_metrics": ("service", "alert_name", "state"),
    "query_logs": ("service", "level", "keyword", "pattern"),
    "lookup_knowledge": ("query",),
}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return " ".join(str(value).split())


def _pairs(prefix: str, value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from _pairs(f"{prefix}.{key}", sub)
    elif isinstance(value, list):
        yield f"{prefix}=[{', '.join(_text(v) for v in value)}]"
    else:
        yield f"{prefix}={_text(value)}"


def alert_text(item: Mapping[str, Any]) -> str:
    """HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=..."""
    rest = [p for key, value in item.items() if key != "alert_name" for p in _pairs(key, value)]
    return ", ".join([_text(item.get("alert_name", "")), *rest])


def log_text(item: Mapping[str, Any]) -> str:
    """2026-07-08 23:05:28 ERROR order-service HikariPool-1 - ... | logger=...; thread=..."""
    head = " ".join(_text(item[k]) for k in ("timestamp", "level", "service", "message"))
    extras = [
        p
        for key, value in item.items()
        if key not in ("timestamp", "level", "service", "message")
        for p in _pairs(key, value)
    ]
    return f"{head} | {'; '.join(extras)}" if extras else head


def block_text(item: Mapping[str, Any]) -> str:
    """[skill] title / section: text (source=...; skill=...; matched=...)"""
    head = f"[{_text(item.get('kind', ''))}] {_text(item.get('title', ''))}"
    if item.get("section"):
        head += f" / {_text(item['section'])}"
    extras = [
        p
        for key, value in item.items()
        if key not in ("kind", "title", "section", "text")
        for p in _pairs(key, value)
    ]
    return f"{head}: {_text(item.get('text', ''))} ({'; '.join(extras)})"


ITEM_TEXT = {"query_metrics": alert_text, "query_logs": log_text, "lookup_knowledge": block_text}


def item_refs(tool: str, items: list[JSON]) -> list[JSON]:
    key = ITEM_PATHS[tool]
    return [{"raw_path": f"$.{key}[{i}]", "text": ITEM_TEXT[tool](item)} for i, item in enumerate(items)]


def no_evidence(tool: str, args: Mapping[str, Any], filters: Mapping[str, str]) -> tuple[JSON, JSON]:
    """The raw result and the single ref of a call that checked and found nothing."""
    query = " ".join(_text(args[k]) for k in _QUERY_KEYS[tool] if k in args) or "*"
    message = NO_EVIDENCE_MESSAGES[tool]
    parts = [
        f"{tool} returned no evidence",
        "evidence_status=no_evidence",
        f"query={query}",
        *(f"{k}={_text(v)}" for k, v in filters.items()),
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
