"""One verified excerpt as words a person reads: the readable half of the offline Composer.

Each excerpt shape the tools return becomes a `Phrase`: a full sentence for the findings, a short
phrase for the headline, how severe it is (to choose the headline's findings) and, for a runbook,
its steps. Every value is copied from the excerpt as it stands, only re-spaced (`p99=4.2s` →
`p99 4.2 s`), so the sentence check finds each one in the excerpt it is bound to; internal fields
(`template=`, `levels=`, `source=…`, `$.alerts[0]`, scores) never reach the text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evigate.rules.enums import ToolName
from evigate.rules.sentence_types import Excerpt
from evigate.server.agents.offline import readable_calls, readable_fields
from evigate.server.agents.offline.readable_fields import quoted

ALERT_TOOLS = frozenset({ToolName.QUERY_METRICS, "query_alerts"})
CLUSTER_PATHS = frozenset({"$.objects", "$.events", "$.revisions", "$.services"})

# How much a finding matters for the headline: higher first.
FIRING_CRITICAL, FIRING, LOG_ERROR, LOG_WARN, VALUE, RESOLVED, OTHER = 60, 50, 40, 30, 25, 20, 10

_FIELD = re.compile(r",\s*(?=[\w.]+=)")
_PATTERN = re.compile(
    r'^template="(?P<template>.*?)" count=(?P<count>\d+) first=(?P<first>\S+ \S+) last=(?P<last>\S+ \S+)'
    r' levels=(?P<levels>\S+) example="(?P<example>.*?)"(?: [\w.]+=\S+)*(?: \| .*)?$',
    re.S,
)
_KNOWLEDGE = re.compile(
    r"^\[(?P<kind>[^\]]+)\]\s*(?P<title>.+?)(?: / (?P<section>[^:]+))?:\s*(?P<body>.*)$", re.S
)
# The retrieval's own note after a knowledge block: `(source=…; match=L1 dense=… (cross-language))`.
_SOURCE = re.compile(r"\s*\((?:source|path)=.*$", re.S)
_SERIES = re.compile(r"^(?P<name>[\w:.]+)\{(?P<labels>[^}]*)\} window=(?P<window>.+?); (?P<rest>.*)$", re.S)
_CHANGE = re.compile(r"change at (.+?)(?:;|$)")
_ERROR_MESSAGE = re.compile(r'(?:"message"|\b(?:err|error|exception|reason))\s*[:=]\s*"?([^";|{}]{6,2000})')
# What a log template's example event said of why it failed (its exception chain, its error field).
_CAUSE = re.compile(r' \| cause="(.*?)"(?= \| |$)', re.S)
_DOCUMENT = re.compile(r"\((?:source|path)=([^;)\s]+)")
_STEP = re.compile(r"(?:^|\s)(\d{1,2})\.\s+")
_VALUE = re.compile(r"^(?P<head>\S+\{[^}]*\}) value=(?P<value>.+?) at (?P<at>.+)$")
_UNIT_VALUE = re.compile(r"^(?:(p\d+)=)?(\d[\d.]*)(ms|s|m|h)$")
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
    source: str = ""  # a runbook's document
    intro: str = ""  # what a runbook with steps says before them
    log_line: bool = False  # one log record quoted
    fallback: str = ""  # the excerpt quoted as it stands, when the sentence is refused


def fields(text: str) -> tuple[str, dict[str, str]]:
    """`HighCPUUsage, service=x, state=firing, …` → ("HighCPUUsage", {service: x, state: firing, …})."""
    head, *rest = _FIELD.split(text)
    out: dict[str, str] = {}
    for part in rest:
        key, _, value = part.partition("=")
        out[key.strip()] = value.strip()
    return head.strip(), out


def value(text: str) -> str:
    """A value as read aloud: `p99=4.2s` → `p99 4.2 s`, `350ms` → `350 ms`; minutes and hours
    (`25m`, `2h`) and anything else as it stands."""
    match = _UNIT_VALUE.match(text.strip())
    if match is None or (match.group(1) is None and match.group(3) in ("m", "h")):
        return text.strip()
    quantile, number, unit = match.groups()
    return f"{quantile + ' ' if quantile else ''}{number} {unit}"


def clock(stamp: str, day: str = "") -> str:
    """`2026-07-08 23:02:41` → `2026-07-08 23:02`, or `23:02` when `day` is the same date."""
    match = _TIME.match(stamp.strip())
    if match is None:
        return stamp.strip()
    return match.group(2) if match.group(1) == day else f"{match.group(1)} {match.group(2)}"


def phrase(excerpt: Excerpt, service: str, language: str) -> Phrase | None:
    """The readable phrase of one excerpt, or None for a shape this module does not know."""
    found = _phrase(excerpt, service, language)
    if found is not None:
        found.fallback = _fallback(excerpt, language == "zh")
    return found


def _fallback(excerpt: Excerpt, zh: bool) -> str:
    """The excerpt's fields quoted one by one, or the excerpt quoted whole (the retrieval's note
    after a knowledge block left out)."""
    text = _SOURCE.sub("", excerpt.text).strip()
    said = readable_fields.phrase(text, excerpt.raw_path, zh) if "=" in text else None
    return said[0] if said is not None else readable_fields.verbatim(text, zh)


def _phrase(excerpt: Excerpt, service: str, language: str) -> Phrase | None:
    text = excerpt.text.strip()
    zh = language == "zh"
    if excerpt.raw_path.split("[", 1)[0] in CLUSTER_PATHS:
        return _cluster(text, excerpt.raw_path, zh)
    if excerpt.tool == ToolName.LOOKUP_KNOWLEDGE:
        return _runbook(text, zh)
    if excerpt.tool in ALERT_TOOLS and excerpt.raw_path.startswith("$.alerts"):
        return _alert(text, zh)
    if excerpt.raw_path.startswith("$.patterns"):
        return _pattern(text, service, zh)
    if excerpt.tool == ToolName.QUERY_LOGS and excerpt.raw_path.startswith("$.logs"):
        return _log_line(text, zh)
    series = _SERIES.match(text)
    if series is not None:
        return _series(series, zh)
    instant = _VALUE.match(text)
    if instant is not None:
        head, val, at = instant.group("head", "value", "at")
        val = value(val)
        signal = head.split("{", 1)[0]
        if zh:
            owner = f"{service} 的 " if service else ""
            return Phrase(f"{owner}{signal} 为 {val}（{at}）。", f"{signal} {val}", VALUE)
        owner = f" of {service}" if service else ""
        return Phrase(f"The {signal}{owner} is {val} at {at}.", f"{signal} {val}", VALUE)
    return None


def _log_line(text: str, zh: bool) -> Phrase:
    """One log record: its line quoted, and what its error fields say (`err={"message":"429 …"}`)."""
    line, _, rest = text.partition(" | ")
    line = line.strip()
    weight = LOG_ERROR if " ERROR " in f" {line} " else LOG_WARN if " WARN " in f" {line} " else OTHER
    field = readable_fields.error_field(rest) or next((m.group(1) for m in _ERROR_MESSAGE.finditer(rest)), "")
    extra = f"（{_chain(field)}）" if zh and field else f" ({_chain(field)})" if field else ""
    if zh:
        return Phrase(f"匹配的日志：{quoted(line)}{extra}。", f"日志{quoted(line)}", weight, log_line=True)
    return Phrase(
        f"A matching log line: {quoted(line)}{extra}.", f"log line {quoted(line)}", weight, log_line=True
    )


def _chain(message: str) -> str:
    """An exception chain (`A ← Caused by: B ← Caused by: C`) as its first and its last link."""
    links = [link.strip() for link in message.split("←") if link.strip()]
    shown = links[:1] + links[-1:] if len(links) > 1 else links
    return " … ".join(quoted(link) for link in shown)


def _series(match: re.Match[str], zh: bool) -> Phrase:
    """A metric series over a window: its last, first, lowest, highest and mean values, each with
    its time, and where it changed."""
    name, labels = match.group("name"), match.group("labels")
    parts = dict(p.split("=", 1) for p in match.group("rest").split("; ") if "=" in p.split(" ", 1)[0])
    owner = f" ({', '.join(quoted(v) for v in labels.split(', ') if v)})" if labels else ""
    words = {"last": "最新", "first": "最早", "min": "最低", "max": "最高", "avg": "平均"} if zh else {}
    said = [
        f"{words.get(k, k)} {quoted(parts[k])}" for k in ("last", "first", "min", "max", "avg") if k in parts
    ]
    change = _CHANGE.search(match.group("rest"))
    if change is not None:
        said.append(f"{'变化于' if zh else 'change at'} {quoted(change.group(1))}")
    sep = "，" if zh else ", "
    window = quoted(match.group("window"))
    if zh:
        sentence = f"{name}{owner} 在 {window} 期间：{sep.join(said)}。"
    else:
        sentence = f"{name}{owner} over {window}: {sep.join(said)}."
    short = f"{name} {said[0]}" if said else name
    return Phrase(sentence, short, VALUE)


def _cluster(text: str, raw_path: str, zh: bool) -> Phrase | None:
    """A cluster object, event or revision, or a catalog entry: its name and its fields' values."""
    said = readable_fields.phrase(text, raw_path, zh)
    if said is None:
        return None
    sentence, short = said
    path = raw_path.split("[", 1)[0]
    problems = re.search(r"problems=\[[^\]]", text) is not None
    if path == "$.events":
        weight = LOG_ERROR if text.startswith("Warning") else OTHER
    elif path == "$.objects":
        weight = FIRING if problems else VALUE
    else:
        weight = VALUE if path == "$.revisions" else OTHER
    return Phrase(sentence, short, weight)


def generic(excerpt: Excerpt, language: str) -> Phrase | None:
    """Any excerpt of `key=value` fields, or else the excerpt quoted: for a claim none of whose
    excerpts has a sentence of its own and whose own text the check refuses."""
    zh = language == "zh"
    text = _SOURCE.sub("", excerpt.text).strip()
    said = readable_fields.phrase(text, excerpt.raw_path, zh)
    fallback = readable_fields.verbatim(text, zh)
    if said is None or "=" not in text:
        return Phrase(fallback, fallback, OTHER, fallback=fallback) if fallback else None
    return Phrase(said[0], said[1], OTHER, fallback=fallback)


def _alert(text: str, zh: bool) -> Phrase | None:
    name, f = fields(text)
    service, state = f.get("service", ""), f.get("state", "").lower()
    if not name or not state:
        return None
    current, threshold = value(_word(f.get("current", ""))), value(_word(f.get("threshold", "")))
    spoken = current
    duration, severity = _word(f.get("duration", "")), _word(f.get("severity", ""))
    critical = severity.lower() == "critical"
    ends = _stamp(f.get("ends_at") or f.get("resolved_at") or "")
    starts = _stamp(f.get("starts_at", ""))
    # the summary says what the value measures ("26.4h old"); the labels what it is about
    summary = readable_fields.quoted(f["summary"]) if f.get("summary") else ""
    labels = _labels(f)
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
        said = (f"：{summary}" if summary else "") + (f"（{labels}）" if labels else "")
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
    said = (f": {summary}" if summary else "") + (f" ({labels})" if labels else "")
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


_OWN_LABELS = frozenset({"alertname", "service", "namespace", "severity", "job", "instance"})


def _labels(f: dict[str, str]) -> str:
    """The alert's other labels (`labels.task=x` → `task "x"`): what it is about."""
    said = [
        f"{key.removeprefix('labels.')} {readable_fields.quoted(_word(value))}"
        for key, value in f.items()
        if key.startswith("labels.") and key.removeprefix("labels.") not in _OWN_LABELS and _word(value)
    ]
    return ", ".join(said[:4])


def _word(text: str) -> str:
    """A field's own value: what precedes any further unkeyed part (`40m8s, firing …` → `40m8s`)."""
    return text.split(", ", 1)[0].strip()


def _stamp(text: str) -> str:
    """A time field's timestamp alone."""
    match = _STAMP.match(text.strip())
    return match.group(0) if match else ""


_QUIET_LEVELS = frozenset({"TRACE", "DEBUG", "INFO", "NOTICE"})  # lines alone: activity, not a problem


def _pattern(text: str, service: str, zh: bool) -> Phrase | None:
    match = _PATTERN.match(text)
    if match is None:
        return None
    count, example, levels = match.group("count", "example", "levels")
    first = match.group("first")
    day = first.split(" ", 1)[0]
    start, end = clock(first), clock(match.group("last"), day)
    error = "ERROR" in levels.upper()
    quiet = {level.strip() for level in levels.upper().split(",")} <= _QUIET_LEVELS
    weight = LOG_ERROR if error else OTHER if quiet else LOG_WARN
    core = _core(match.group("template")) or example
    said = _CAUSE.search(text)
    cause = ""
    if said is not None:
        cause = f"（原因：{_chain(said.group(1))}）" if zh else f" (cause: {_chain(said.group(1))})"
    if zh:  # every line within one minute: one time, not a span from it to itself
        owner, level = f"{service} " if service else "", levels.replace(",", "/")
        when = f"在 {start}" if start.rpartition(" ")[2] == end else f"在 {start} 至 {end} 之间"
        return Phrase(
            f"{owner}{when}记录了 {count} 条 {level} 日志，例如{quoted(example)}{cause}。",
            f"{count} 条“{core}”{level} 日志",
            weight,
        )
    noun = "errors" if error else "warnings" if "WARN" in levels.upper() else "log lines"
    noun = noun[:-1] if count == "1" else noun
    owner = f"{service} logged" if service else "The logs hold"
    when = f"at {start}" if start.rpartition(" ")[2] == end else f"between {start} and {end}"
    return Phrase(
        f"{owner} {count} {noun} {when}, for example {quoted(example)}{cause}.",
        f'{count} "{core}" {noun} {when}',
        weight,
    )


def _core(template: str) -> str:
    """The longest literal piece of a log template (`HikariPool-<*> - Connection is not available,
    request timed out after <*>` → `Connection is not available, request timed out after`)."""
    pieces = [p.strip(" -:,;=") for p in template.split("<*>")]
    best = max(pieces, key=len, default="")
    return best if len(best) >= 12 else ""


def _runbook(text: str, zh: bool) -> Phrase | None:
    found = _runbook_of(text, zh)
    document = _DOCUMENT.search(text)
    if found is not None and document is not None:
        found.source = document.group(1)
    return found


def _runbook_of(text: str, zh: bool) -> Phrase | None:
    match = _KNOWLEDGE.match(_SOURCE.sub("", text))
    if match is None:
        return None
    title, body = match.group("title").strip(), match.group("body").strip()
    steps = _steps(body)
    first = _STEP.search(body)
    intro = body[: first.start()].strip() if steps and first is not None else body
    said = readable_fields.quoted(intro) if intro else ""
    name = readable_fields.quoted(title) or title
    if zh:
        told = f"知识库条目{name}" + (f"：{said}。" if said else "。")
        sentence = f"知识库条目{name}给出以下步骤：" if steps else told
    else:
        told = f"The runbook {name} says {said}." if said else f"The runbook {name}."
        sentence = f"The runbook {name} gives these steps:" if steps else told
    short = f"知识库条目{name}" if zh else f"the runbook {name}"
    return Phrase(sentence, short, OTHER, steps, title, intro=told if steps and said else "")


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
    """A failed call as a could-not-check line in words (readable_calls)."""
    return readable_calls.failed_call(text, zh)
