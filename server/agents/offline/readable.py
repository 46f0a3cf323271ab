"""One verified excerpt as words a person reads: the readable half of the offline Composer.

Each excerpt shape the tools return becomes a `Phrase`: a full sentence for the findings, a short
phrase for the headline, how severe it is (to choose the headline's findings) and, for a runbook,
its steps. Every value is copied from the excerpt as it stands, only re-spaced (`p99=4.2s` →
`p99 4.2 s`), so the sentence check finds each one in the excerpt it is bound to; internal fields
(`template=`, `levels=`, `source=…`, `$.alerts[0]`, scores) never reach the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evigate.rules.enums import ToolName
from evigate.rules.sentence_types import Excerpt

ALERT_TOOLS = frozenset({ToolName.QUERY_METRICS, "query_alerts"})

# How much a finding matters for the headline: higher first.
FIRING_CRITICAL, FIRING, LOG_ERROR, LOG_WARN, VALUE, RESOLVED, OTHER = 60, 50, 40, 30, 25, 20, 10

_FIELD = re.compile(r",\s*(?=[\w.]+=)")
_PATTERN = re.compile(
    r'^template="(?P<template>.*?)" count=(?P<count>\d+) first=(?P<first>\S+ \S+) last=(?P<last>\S+ \S+)'
    r' levels=(?P<levels>\S+) example="(?P<example>.*)"$'
)
_KNOWLEDGE = re.compile(
    r"^\[(?P<kind>[^\]]+)\]\s*(?P<title>.+?)(?: / (?P<section>[^:]+))?:\s*(?P<body>.*)$", re.S
)
# The retrieval's own note after a knowledge block: `(source=…; match=L1 dense=… (cross-language))`.
_SOURCE = re.compile(r"\s*\((?:source|path)=.*$", re.S)
_STEP = re.compile(r"(?:^|\s)(\d{1,2})\.\s+")
_FAILED = re.compile(r"^(?P<tool>\w+)\((?P<args>[^()]*)\) failed \((?P<reason>.*)\)$", re.S)
_VALUE = re.compile(r"^(?P<head>\S+\{[^}]*\}) value=(?P<value>.+?) at (?P<at>.+)$")
_UNIT_VALUE = re.compile(r"^(p\d+)=(\d[\d.]*)(ms|s|m|h)$")
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?")
_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2})(?::\d{2})?$")


@dataclass
class Phrase:
    """What one excerpt says, readable: `sentence` for the findings, `short` for the headline."""

    sentence: str
    short: str
    weight: int = OTHER
    steps: list[str] = field(default_factory=list)
    title: str = ""  # a runbook's title
    log_line: bool = False  # one log record quoted


def fields(text: str) -> tuple[str, dict[str, str]]:
    """`HighCPUUsage, service=x, state=firing, …` → ("HighCPUUsage", {service: x, state: firing, …})."""
    head, *rest = _FIELD.split(text)
    out: dict[str, str] = {}
    for part in rest:
        key, _, value = part.partition("=")
        out[key.strip()] = value.strip()
    return head.strip(), out


def value(text: str) -> str:
    """A value as read aloud: `p99=4.2s` → `p99 4.2 s`; anything else as it stands."""
    match = _UNIT_VALUE.match(text.strip())
    return f"{match.group(1)} {match.group(2)} {match.group(3)}" if match else text.strip()


def clock(stamp: str, day: str = "") -> str:
    """`2026-07-08 23:02:41` → `2026-07-08 23:02`, or `23:02` when `day` is the same date."""
    match = _TIME.match(stamp.strip())
    if match is None:
        return stamp.strip()
    return match.group(2) if match.group(1) == day else f"{match.group(1)} {match.group(2)}"


def phrase(excerpt: Excerpt, service: str, language: str) -> Phrase | None:
    """The readable phrase of one excerpt, or None for a shape this module does not know."""
    text = excerpt.text.strip()
    zh = language == "zh"
    if excerpt.tool == ToolName.LOOKUP_KNOWLEDGE:
        return _runbook(text, zh)
    if excerpt.tool in ALERT_TOOLS and excerpt.raw_path.startswith("$.alerts"):
        return _alert(text, zh)
    if excerpt.raw_path.startswith("$.patterns"):
        return _pattern(text, service, zh)
    if excerpt.tool == ToolName.QUERY_LOGS and excerpt.raw_path.startswith("$.logs"):
        line = text.split(" | ", 1)[0].strip()
        weight = LOG_ERROR if " ERROR " in f" {line} " else LOG_WARN if " WARN " in f" {line} " else OTHER
        if zh:
            return Phrase(f"匹配的日志：“{line}”。", f"日志“{line}”", weight, log_line=True)
        return Phrase(f'A matching log line: "{line}".', f'log line "{line}"', weight, log_line=True)
    instant = _VALUE.match(text)
    if instant is not None:
        head, val, at = instant.group("head", "value", "at")
        signal = head.split("{", 1)[0]
        if zh:
            return Phrase(f"{service} 的 {signal} 为 {val}（{at}）。", f"{signal} {val}", VALUE)
        return Phrase(f"The {signal} of {service} is {val} at {at}.", f"{signal} {val}", VALUE)
    return None


def _alert(text: str, zh: bool) -> Phrase | None:
    name, f = fields(text)
    service, state = f.get("service", ""), f.get("state", "").lower()
    if not name or not state:
        return None
    current, threshold = _word(f.get("current", "")), _word(f.get("threshold", ""))
    spoken = value(current)
    duration, severity = _word(f.get("duration", "")), _word(f.get("severity", ""))
    critical = severity.lower() == "critical"
    ends = _stamp(f.get("ends_at") or f.get("resolved_at") or "")
    starts = _stamp(f.get("starts_at", ""))
    # the summary says what the alert measured when it names no current value
    summary = f.get("summary", "") if not current else ""
    if zh:
        owner = f"{service} 的 " if service else ""
        details = "，".join(
            p
            for p in (
                f"状态 {state}",
                f"当前 {current}" if current else "",
                f"阈值 {threshold}" if threshold else "",
                f"持续 {duration}" if duration else "",
                f"级别 {severity}" if severity else "",
                f"开始于 {starts}" if starts and state == "firing" else "",
            )
            if p
        )
        said = f"：“{summary}”" if summary else ""
        if state == "firing":
            tail = f"（{details}）" if details else ""
            return Phrase(
                f"{owner}{name} 告警正在触发{tail}{said}。",
                f"{name} 告警正在触发" + (f"（{spoken}）" if spoken else ""),
                FIRING_CRITICAL if critical else FIRING,
            )
        if state == "resolved":
            tail = f"，恢复时间 {ends}" if ends else ""
            return Phrase(
                f"{owner}{name} 告警已恢复（{details}{tail}）{said}。", f"{name} 告警已恢复", RESOLVED
            )
        return Phrase(f"{owner}{name} 告警的状态为 {state}（{details}）。", f"{name} 告警 {state}", OTHER)
    owner = f" of {service}" if service else ""
    details = ", ".join(
        p
        for p in (
            f"threshold {threshold}" if threshold else "",
            f"for {duration}" if duration else "",
            f"severity {severity}" if severity else "",
            f"since {starts}" if starts and state == "firing" else "",
        )
        if p
    )
    said = f': "{summary}"' if summary else ""
    if state == "firing":
        at = f" at {current}" if current else ""
        return Phrase(
            f"The {name} alert{owner} is firing{at} ({details}){said}.",
            f"{name} is firing" + (f" ({spoken})" if spoken else ""),
            FIRING_CRITICAL if critical else FIRING,
        )
    if state == "resolved":
        was = f"it was at {current}" if current else ""
        end = f"ended at {ends}" if ends else ""
        tail = "; ".join(p for p in (was, end) if p)
        return Phrase(
            f"The {name} alert{owner} has resolved" + (f" ({tail})" if tail else "") + f"{said}.",
            f"{name} has resolved",
            RESOLVED,
        )
    return Phrase(f"The {name} alert{owner} is {state} ({details}).", f"{name} is {state}", OTHER)


def _word(text: str) -> str:
    """A field's own value: what precedes any further unkeyed part (`40m8s, firing …` → `40m8s`)."""
    return text.split(", ", 1)[0].strip()


def _stamp(text: str) -> str:
    """A time field's timestamp alone."""
    match = _STAMP.match(text.strip())
    return match.group(0) if match else ""


def _pattern(text: str, service: str, zh: bool) -> Phrase | None:
    match = _PATTERN.match(text)
    if match is None:
        return None
    count, example, levels = match.group("count", "example", "levels")
    first = match.group("first")
    day = first.split(" ", 1)[0]
    start, end = clock(first), clock(match.group("last"), day)
    error = "ERROR" in levels.upper()
    core = _core(match.group("template")) or example
    if zh:
        owner = f"{service} " if service else ""
        level = levels.replace(",", "/")
        return Phrase(
            f"{owner}在 {start} 至 {end} 之间记录了 {count} 条 {level} 日志，例如“{example}”。",
            f"{count} 条“{core}”{level} 日志",
            LOG_ERROR if error else LOG_WARN,
        )
    noun = "errors" if error else "warnings" if "WARN" in levels.upper() else "log lines"
    noun = noun[:-1] if count == "1" else noun
    owner = f"{service} logged" if service else "The logs hold"
    return Phrase(
        f'{owner} {count} {noun} between {start} and {end}, for example "{example}".',
        f'{count} "{core}" {noun} between {start} and {end}',
        LOG_ERROR if error else LOG_WARN,
    )


def _core(template: str) -> str:
    """The longest literal piece of a log template (`HikariPool-<*> - Connection is not available,
    request timed out after <*>` → `Connection is not available, request timed out after`)."""
    pieces = [p.strip(" -:,;=") for p in template.split("<*>")]
    best = max(pieces, key=len, default="")
    return best if len(best) >= 12 else ""


def _runbook(text: str, zh: bool) -> Phrase | None:
    match = _KNOWLEDGE.match(_SOURCE.sub("", text))
    if match is None:
        return None
    title, body = match.group("title").strip(), match.group("body").strip()
    steps = _steps(body)
    if zh:
        sentence = f"知识库条目“{title}”给出以下步骤：" if steps else f"知识库条目“{title}”：{body}"
    else:
        sentence = f'The runbook "{title}" gives these steps:' if steps else f'The runbook "{title}": {body}'
    return Phrase(sentence, title, OTHER, steps, title)


def _steps(body: str) -> list[str]:
    """The numbered steps of a runbook body, in order; a last step cut off by the excerpt is left
    out."""
    marks = list(_STEP.finditer(body))
    if len(marks) < 2 or marks[0].group(1) != "1":
        return []
    steps = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        step = body[mark.end() : end].strip()
        if step:
            steps.append(step)
    if steps and not re.search(r"[.。!！?？)）]$", steps[-1]):
        steps.pop()
    return steps


def failed_call(text: str, zh: bool) -> str:
    """A failed call as a could-not-check line: `query_promql(signal=cpu, service=x) failed (…)` →
    `Could not check query_promql (signal=cpu, service=x): …`."""
    match = _FAILED.match(text.strip())
    if match is None:
        return text.strip()
    tool, args, reason = match.group("tool", "args", "reason")
    reason = reason.split(": ", 1)[0].strip()
    if zh:
        return f"未能检查 {tool}（{args}）：{reason}。"
    return f"Could not check {tool} ({args}): {reason}."
