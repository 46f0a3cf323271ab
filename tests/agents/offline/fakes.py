"""A fake ToolBox over a small demo world, producing ToolCallResults in the documented ref formats.

alerts: "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, severity=..."
logs:   "2026-07-08 23:05:28 ERROR order-service HikariPool-1 - Connection is not available, ..."
none:   "query_logs returned no evidence; evidence_status=no_evidence; query=...; <filters>; total=0; ..."
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from evigate.rules.types import InvocationFacts
from evigate.server.agents.base import JSON, ExecutorTask
from evigate.server.deadline import Deadline
from evigate.server.tools.calls import ToolCallResult
from tests.support import tool_table

WORLD_NOW = datetime(2026, 7, 8, 23, 30, tzinfo=UTC)

ALERTS: list[JSON] = [
    {
        "alert_name": "HighCPUUsage",
        "service": "payment-service",
        "state": "firing",
        "current": "92%",
        "duration": "25m",
        "severity": "critical",
        "threshold": "80%",
        "started_at": "2026-07-08T23:05:00Z",
    },
    {
        "alert_name": "HighErrorRate",
        "service": "order-service",
        "state": "resolved",
        "current": "3.2%",
        "duration": "10m",
        "severity": "warning",
        "threshold": "2%",
        "started_at": "2026-07-08T21:40:00Z",
    },
    {
        "alert_name": "PodRestart",
        "service": "inventory-service",
        "state": "firing",
        "current": "3",
        "duration": "15m",
        "severity": "warning",
        "threshold": "1",
        "started_at": "2026-07-08T23:15:00Z",
    },
]

LOGS: list[JSON] = [
    {
        "timestamp": "2026-07-08 23:05:28",
        "level": "ERROR",
        "service": "order-service",
        "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
        "logger": "com.zaxxer.hikari.pool.HikariPool",
    },
    {
        "timestamp": "2026-07-08 23:04:10",
        "level": "ERROR",
        "service": "order-service",
        "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms",
        "logger": "com.zaxxer.hikari.pool.HikariPool",
    },
    {
        "timestamp": "2026-07-08 23:10:02",
        "level": "WARN",
        "service": "payment-service",
        "message": "Slow response from upstream bank-gateway, took 2300ms",
    },
    {
        "timestamp": "2026-07-08 22:20:41",
        "level": "ERROR",
        "service": "api-gateway",
        "message": "Upstream request timed out after 5000ms route=/orders",
    },
    {
        "timestamp": "2026-07-08 23:12:55",
        "level": "ERROR",
        "service": "user-service",
        "message": "java.lang.OutOfMemoryError: Java heap space",
    },
]

KNOWLEDGE: list[JSON] = [
    {
        "kind": "runbook",
        "title": "HikariCP 连接池耗尽",
        "text": "检查活跃连接数、慢查询与连接泄漏",
        "keys": ["HikariCP", "HikariPool-1"],
    },
    {
        "kind": "runbook",
        "title": "HighCPUUsage",
        "text": "查看 CPU 趋势、GC 日志与热点线程",
        "keys": ["HighCPUUsage"],
    },
]


def _pairs(item: Mapping[str, Any], skip: Sequence[str]) -> list[str]:
    return [f"{key}={value}" for key, value in item.items() if key not in skip]


def alert_text(item: Mapping[str, Any]) -> str:
    return ", ".join([str(item["alert_name"]), *_pairs(item, ("alert_name",))])


def log_text(item: Mapping[str, Any]) -> str:
    head = " ".join(str(item[key]) for key in ("timestamp", "level", "service", "message"))
    extras = _pairs(item, ("timestamp", "level", "service", "message"))
    return f"{head} | {'; '.join(extras)}" if extras else head


def block_text(item: Mapping[str, Any]) -> str:
    return f"[{item['kind']}] {item['title']}: {item['text']} (keys={', '.join(item['keys'])})"


def _since(value: str) -> datetime:
    match = re.fullmatch(r"(\d+)([mhd])", value)
    if match is None:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # naive is UTC, as the tools read it
    unit = {"m": 1, "h": 60, "d": 1440}[match.group(2)]
    return WORLD_NOW - timedelta(minutes=int(match.group(1)) * unit)


@dataclass
class FakeToolBox:
    """Records every call; identical successful repeats are deduped like SessionToolBox."""

    fail_tools: set[str] = field(default_factory=set)
    next_id: int = 517
    calls: list[tuple[str, JSON]] = field(default_factory=list)
    results: list[ToolCallResult] = field(default_factory=list)

    def __hash__(self) -> int:
        return id(self)

    def schemas(self) -> list[JSON]:
        return []

    async def call(self, tool_name: str, arguments: Mapping[str, Any], deadline: Deadline) -> ToolCallResult:
        args = dict(arguments)
        self.calls.append((tool_name, args))
        invocation_id = self.next_id
        self.next_id += 1
        details: JSON
        for earlier in self.results:
            if earlier.tool_name == tool_name and earlier.arguments == args and earlier.status == "success":
                details = {
                    **earlier.retrieval_details,
                    "evidence_status": "deduped",
                    "deduped_from": earlier.invocation_id,
                }
                return self._keep(
                    ToolCallResult(invocation_id, tool_name, args, "success", None, None, details)
                )
        if tool_name in self.fail_tools:
            details = {"evidence_status": "failed", "match_level": "none", "evidence_refs": []}
            error = f"{tool_name} backend unavailable: connection refused"
            return self._keep(ToolCallResult(invocation_id, tool_name, args, "failed", error, None, details))
        key, items, text = self._run(tool_name, args)
        if items:
            refs = [{"raw_path": f"$.{key}[{i}]", "text": text(item)} for i, item in enumerate(items)]
            details = {"evidence_status": "supported", "match_level": "L0", "evidence_refs": refs}
            raw: JSON = {key: items, "total": len(items)}
        else:
            details = {
                "evidence_status": "no_evidence",
                "match_level": "none",
                "evidence_refs": [self._none(tool_name, args)],
            }
            raw = {"no_evidence": {"tool": tool_name, "total": 0}}
        return self._keep(ToolCallResult(invocation_id, tool_name, args, "success", None, raw, details))

    def _keep(self, result: ToolCallResult) -> ToolCallResult:
        self.results.append(result)
        return result

    def _run(self, tool: str, args: JSON) -> tuple[str, list[JSON], Any]:
        if tool == "query_metrics":
            alerts = [
                a
                for a in ALERTS
                if args.get("service") in (None, a["service"])
                and args.get("alert_name") in (None, a["alert_name"])
                and args.get("state") in (None, a["state"])
            ]
            return "alerts", alerts, alert_text
        if tool == "query_logs":
            logs = []
            for line in LOGS:
                searchable = log_text(line)
                if args.get("service") not in (None, line["service"]):
                    continue
                if args.get("level") not in (None, line["level"]):
                    continue
                if "keyword" in args and str(args["keyword"]).lower() not in searchable.lower():
                    continue
                if "pattern" in args and re.search(str(args["pattern"]), searchable) is None:
                    continue
                stamp = datetime.fromisoformat(str(line["timestamp"])).replace(tzinfo=UTC)
                if "since" in args and stamp < _since(str(args["since"])):
                    continue
                logs.append(line)
            return "logs", logs, log_text
        words = str(args.get("query", "")).lower().split()
        blocks = [b for b in KNOWLEDGE if any(k.lower() in words for k in b["keys"])]
        return "evidence_blocks", blocks, block_text

    def _none(self, tool: str, args: JSON) -> JSON:
        keys = {
            "query_metrics": ("service", "alert_name", "state"),
            "query_logs": ("service", "level", "keyword", "pattern"),
            "lookup_knowledge": ("query",),
        }[tool]
        query = " ".join(str(args[k]) for k in keys if k in args) or "*"
        filters = [f"{k}={v}" for k, v in args.items() if k not in ("limit", "query")]
        message = {"query_metrics": "未找到匹配的告警", "query_logs": "未找到匹配的日志"}.get(
            tool, "未找到匹配的知识"
        )
        parts = [f"{tool} returned no evidence", "evidence_status=no_evidence", f"query={query}", *filters]
        return {"raw_path": "$.no_evidence", "text": "; ".join([*parts, "total=0", f"message={message}"])}


def make_task(
    tools: FakeToolBox, query: str, language: str = "zh", retry: JSON | None = None, round_: int = 1
) -> ExecutorTask:
    return ExecutorTask(query, language, {}, round_, retry, tools, Deadline.none())


def gatekeeper_result(structured: JSON, tools: FakeToolBox) -> JSON:
    """The real Gatekeeper over the fake session's invocations."""
    invocations = [
        InvocationFacts.from_seed(r.invocation_id, r.tool_name, r.retrieval_details) for r in tools.results
    ]
    return tool_table.check(structured, invocations).to_seed()
