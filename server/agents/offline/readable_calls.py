"""A tool call that could not give evidence, as words a person reads: what could not be checked
("the alerts of gateway (GatewayUpstream5xxRatioHigh)", "知识库中与“X”相关的条目") and why, never the
call itself (`query_metrics(service=…)`), whose syntax and tool names belong in the trace.

Every value is copied from the call's arguments as written (a signal's underscores read as spaces),
so the sentence check finds each in the failed call's excerpt; the words say the call could not
check, never that nothing was found. A knowledge base that is not there is "not configured".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import ToolName
from evigate.server.agents.offline.readable_fields import quoted

_FAILED = re.compile(r"^(?P<tool>\w+)\((?P<args>[^()]*)\) failed \((?P<reason>.*)\)$", re.S)
_ARG = re.compile(r"(?:^|,\s*)(\w+)=")
# the files source's error for a data directory without knowledge/ (sources/files/knowledge_base.py)
_NO_KNOWLEDGE = re.compile(r"^knowledge data unavailable: .* is not a directory", re.S)


def arguments(text: str) -> dict[str, str]:
    """`service=x, about=Is it up?, since=1h` → {service: x, about: …, since: 1h}."""
    marks = list(_ARG.finditer(text))
    out = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out[mark.group(1)] = text[mark.end() : end].strip()
    return out


def what(tool: str, args: Mapping[str, Any], zh: bool) -> str:
    """What the call would have checked, in words."""
    service = str(args.get("service") or args.get("name") or "").strip()
    of_en = f" of {service}" if service else ""
    of_zh = f" {service} 的" if service else ""
    if tool == ToolName.QUERY_METRICS:
        alert = str(args.get("alert_name") or "").strip()
        return (
            f"{of_zh}告警{f' {alert}' if alert else ''}"
            if zh
            else f"the alerts{of_en}{f' ({alert})' if alert else ''}"
        )
    if tool == ToolName.QUERY_PROMQL:
        signal = str(args.get("signal") or "").replace("_", " ").strip()
        return (
            f"{of_zh} {signal} 指标"
            if zh and signal
            else f"{of_zh}指标"
            if zh
            else f"the {signal or 'metrics'}{of_en}"
        )
    if tool in (ToolName.QUERY_LOGS, ToolName.SUMMARIZE_LOGS):
        level = str(args.get("level") or "").strip()
        kind = (
            ("日志模式" if zh else "log patterns")
            if tool == ToolName.SUMMARIZE_LOGS
            else ("日志" if zh else "logs")
        )
        terms = [quoted(t) for t in str(args.get("keyword") or args.get("pattern") or "").split("|")]
        terms = [t for t in terms if t]
        said = f" {(' 或 ' if zh else ' or ').join(terms)}" if terms else ""
        if zh:
            return f"{of_zh} {level} {kind}{said}" if level else f"{of_zh}{kind}{said}"
        return f"the {level + ' ' if level else ''}{kind}{of_en}" + (f" for{said}" if said else "")
    if tool == ToolName.LOOKUP_KNOWLEDGE:
        query = quoted(str(args.get("query") or ""))
        return (
            (f"知识库中与{query}相关的条目" if query else "知识库")
            if zh
            else f"the runbooks{f' for {query}' if query else ''}"
        )
    if tool == ToolName.LIST_SERVICES:
        return "服务目录" if zh else "the service catalog"
    words = tool.replace("_", " ").replace("k8s", "Kubernetes")
    return f"{of_zh} {words}" if zh else f"the {words}{of_en}"


def failed(tool: str, args: Mapping[str, Any], reason: str, zh: bool) -> str:
    """The could-not-check line of a call that failed for `reason` (its first part is said)."""
    if tool == ToolName.LOOKUP_KNOWLEDGE and _NO_KNOWLEDGE.match(reason.strip()):
        return (
            "未能查阅知识库：未配置知识库。"
            if zh
            else "The runbooks could not be checked: no knowledge base is configured."
        )
    # the tool's own words, quoted: read verbatim ("no logs of x are available" says nothing was
    # found of nothing; the call could not check)
    said = quoted(reason.split(": ", 1)[0].strip().rstrip("。."))
    checked = what(tool, args, zh)
    if zh:
        return f"未能检查{checked}：{said}。" if said else f"未能检查{checked}。"
    return f"Could not check {checked}: {said}." if said else f"Could not check {checked}."


def failed_call(text: str, zh: bool) -> str:
    """`query_promql(signal=cpu, service=x) failed (…)` → `Could not check the cpu of x: …`; a text of
    another shape as it stands."""
    match = _FAILED.match(text.strip())
    if match is None:
        return text.strip()
    return failed(match.group("tool"), arguments(match.group("args")), match.group("reason"), zh)


def not_citable(tool: str, args: Mapping[str, Any], zh: bool) -> str:
    """A call that returned something none of which could be cited."""
    checked = what(tool, args, zh)
    return (
        f"未能检查{checked}：返回的结果无法作为证据引用。"
        if zh
        else f"Could not check {checked}: its result could not be cited."
    )


def off_subject(tool: str, args: Mapping[str, Any], term: str, zh: bool) -> str:
    """A log query whose lines do not hold the question's subject."""
    checked = what(tool, args, zh)
    if zh:
        return f"未能检查{checked}：返回的日志行不包含 {term}，未作为证据引用。"
    return f"Could not check {checked}: its lines do not hold {term} and were not cited."
