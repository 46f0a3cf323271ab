"""Turning recorded tool results into executor_evidence_v2 claims with exact bindings.

Every excerpt is a ref text copied verbatim, so it keeps every number and identifier of its source;
every identifier a claim text names is checked against the excerpts it binds before it is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evigate.rules.enums import CallStatus, EvidenceStatus, ToolName
from evigate.rules.types import EvidenceRef as Ref
from evigate.rules.types import parse_evidence_refs
from evigate.server.agents.base import JSON
from evigate.server.agents.offline import cluster_claims, readable_calls, signal_calls
from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.facts import critical_facts, fact_supported
from evigate.server.agents.offline.tool_hooks import hooks_of
from evigate.server.tools.calls import ToolCallResult
from evigate.server.understanding.vocabulary import LogTerm

# A claim binds at most this many array items: enough to show a pattern, short enough to verify.
MAX_BINDINGS = 5
# A list intent ("list the errors", "show me the logs") quotes every template summarize_logs returns
# (its default 10 most frequent and the rare severe ones after them).
MAX_LIST_BINDINGS = 12
QUOTE_CHARS = 160  # a quoted log line or knowledge block in a claim
_ALERT_FIELDS = ("state", "severity", "current", "duration", "ends_at", "resolved_at")
STEPS_CHARS = 600  # a runbook block quoted in a claim: its steps, its commands


def refs_of(result: ToolCallResult) -> list[Ref]:
    return list(parse_evidence_refs(result.retrieval_details) or ())


def outcome(result: ToolCallResult, refs: Sequence[Ref]) -> EvidenceStatus:
    """SUPPORTED | NO_EVIDENCE | FAILED: what the citable `refs` of a result show."""
    failed = result.retrieval_details.get("evidence_status") == EvidenceStatus.FAILED
    if result.status != CallStatus.SUCCESS or failed:
        return EvidenceStatus.FAILED
    if any(ref.raw_path == "$.no_evidence" for ref in refs):
        return EvidenceStatus.NO_EVIDENCE
    if refs:
        return EvidenceStatus.SUPPORTED
    return EvidenceStatus.FAILED  # nothing citable: a result without refs cannot back any claim


def binding(result: ToolCallResult, ref: Ref) -> JSON:
    return {
        "source_type": "tool_trace",
        "source_id": "",
        "tool_name": result.tool_name,
        "source_invocation_id": result.invocation_id,
        "raw_path": ref.raw_path,
        "evidence_excerpt": ref.text,
    }


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """A verbatim prefix of `text`, cut at whitespace so no number or identifier is cut in two."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > 0 else limit].rstrip(" ,;，；") + " …"


def _carried(token: str | None, excerpts: Sequence[str]) -> bool:
    """True when every critical fact of `token` is in the excerpts (so the claim may name it)."""
    if not token:
        return False
    return all(fact_supported(fact, excerpts, negative_claim=False) for fact in critical_facts(token))


_SEVERITY_RANK = {"critical": 0, "page": 0, "error": 1, "high": 1, "warning": 2, "warn": 2, "medium": 2}


def alert_rank(ref: Ref) -> tuple[int, int]:
    """A survey's order of alerts: firing before resolved, then by severity (the source's order,
    newest first, breaks ties)."""
    _, fields = _alert_fields(ref.text)
    firing = 0 if fields.get("state") == "firing" else 1
    return firing, _SEVERITY_RANK.get(fields.get("severity", "").lower(), 3)


def _alert_fields(text: str) -> tuple[str | None, dict[str, str]]:
    parts = [part.strip() for part in text.split(",")]
    name = parts[0] if parts and "=" not in parts[0] else None
    fields: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if sep and key.strip() and value.strip():
            fields.setdefault(key.strip(), value.strip())
    return name, fields


def _alert_phrase(text: str, language: str) -> tuple[str, str, str | None, str | None]:
    """(name, "state=firing, current=92%, duration=25m", service, state) from one alert ref."""
    name, fields = _alert_fields(text)
    details = ", ".join(f"{key}={fields[key]}" for key in _ALERT_FIELDS if key in fields)
    return name or "", details, fields.get("service"), fields.get("state")


def _bracket(details: str, zh: bool) -> str:
    if not details:
        return ""
    return f"（{details}）" if zh else f" ({details})"


def observation_text(call: PlannedCall, result: ToolCallResult, refs: Sequence[Ref], language: str) -> str:
    excerpts = [ref.text for ref in refs]
    zh = language == "zh"
    if result.tool_name == ToolName.QUERY_PROMQL:
        return signal_calls.observation_text(call, refs, language)
    if result.tool_name == ToolName.QUERY_METRICS:
        return _alerts_text(refs, zh)
    if result.tool_name == ToolName.QUERY_LOGS:
        service = call.service if _carried(call.service, excerpts) else None
        term = call.term.name if call.term is not None and _carried(call.term.name, excerpts) else None
        # The line itself, without the extra fields the ref appends after " | ".
        first = quote(refs[0].text.split(" | ")[0])
        thrown = _exception_piece(refs[0].text)
        if zh:
            where = f"{service} 的日志中" if service else "日志中"
            what = f"检索到 {term} 相关记录" if term else "检索到匹配记录"
            more = "，例如" if len(refs) > 1 else ""
            return f"{where}{what}{more}：“{first}”{f'，异常：“{thrown}”' if thrown else ''}。"
        where = f"{service} logs" if service else "the logs"
        if term and (" " in term or term.islower()):
            what = f'entries matching "{term}"'  # "backlog-related" would be a word no line holds
        else:
            what = f"{term}-related entries" if term else "matching entries"
        more = ", for example" if len(refs) > 1 else ""
        with_thrown = f', with "{thrown}"' if thrown else ""
        return f'This query found {what} in {where}{more}: "{first}"{with_thrown}.'
    if result.tool_name == ToolName.LOOKUP_KNOWLEDGE:
        return _knowledge_text(refs, zh)
    if result.tool_name == ToolName.LIST_SERVICES:
        item = refs[0].text.split(",", 1)[0]
        asked = call.service or ""
        if zh:
            return f"服务目录中 {asked} 对应的服务是 {item}：“{quote(refs[0].text)}”。"
        return f'The service catalog resolves {asked} to {item}: "{quote(refs[0].text)}".'
    if result.tool_name == ToolName.SUMMARIZE_LOGS:
        return _patterns_text(call, refs, zh)
    if result.tool_name in cluster_claims.CLUSTER_TOOLS:
        return cluster_claims.observation_text(result, refs, language)
    found = hooks_of(result.tool_name).found
    if found is not None:
        return found(call.arguments, excerpts, language)
    # Any other registered tool: its items quoted as returned.
    quoted = (
        "；".join(f"“{quote(ref.text)}”" for ref in refs[:3])
        if zh
        else "; ".join(f'"{quote(ref.text)}"' for ref in refs[:3])
    )
    owner = call.service if _carried(call.service, excerpts) else None
    if zh:
        return f"{result.tool_name}{f'（{owner}）' if owner else ''}返回：{quoted}。"
    return f"{result.tool_name}{f' for {owner}' if owner else ''} returned: {quoted}."


def _patterns_text(call: PlannedCall, refs: Sequence[Ref], zh: bool) -> str:
    """The most frequent log templates, as summarize_logs counted them (count, first, last seen)."""
    excerpts = [ref.text for ref in refs]
    level = call.level if _carried(call.level, excerpts) else None
    owner = call.service if _carried(call.service, excerpts) else None
    shown = refs if call.purpose == "list" else refs[:3]  # a list intent: every template, no cap
    if zh:
        listed = "；".join("，".join(f"“{part}”" for part in _pattern_parts(ref.text)) for ref in shown)
        where = f"{owner} 的" if owner else ""
        scope = f"{level} 及以上级别" if level else ""
        return f"{where}{scope}最常见的日志模式：{listed}。"
    listed = "; ".join(", ".join(f'"{part}"' for part in _pattern_parts(ref.text)) for ref in shown)
    scope = f" at {level} and above" if level else ""
    return f"The most frequent log patterns{scope}{f' of {owner}' if owner else ''}: {listed}."


_EXCEPTION_FIELD = re.compile(r"exception=.*?(?=; [\w.]+=|$)")


def _exception_piece(text: str) -> str | None:
    """The `exception=A: m ← Caused by: B: n` a log line's ref carries, verbatim, when it has one."""
    found = _EXCEPTION_FIELD.search(text.partition(" | ")[2])
    return quote(found.group(0), 240) if found else None


def _pattern_parts(text: str) -> list[str]:
    """A template's ref quoted in verbatim pieces: its head (template, count, span, example), then
    how it changed across the compared moment and its first varying value, when the ref holds them."""
    head, *details = text.split(" | ")
    kept = [d for d in details if d.startswith(("cause=", "change="))]
    kept += [d for d in details if d.startswith("slot1:")]
    return [quote(head, 220), *(quote(d, 200) for d in kept)]


def _alerts_text(refs: Sequence[Ref], zh: bool) -> str:
    """Each alert as its own case: firing, or resolved (with when), with its service when the refs
    name several."""
    phrases = [_alert_phrase(ref.text, "zh" if zh else "en") for ref in refs]
    services = {service for _, _, service, _ in phrases if service}
    service = next(iter(services)) if len(services) == 1 else None
    parts = []
    for name, details, owner, state in phrases:
        shown = details if service or not owner else f"service={owner}, {details}"
        if zh:
            verb = "正在触发" if state == "firing" else "已恢复" if state == "resolved" else "存在"
            parts.append(f"{name or '匹配的'} 告警{verb}{_bracket(shown, zh)}")
        else:
            verb = (
                "is firing" if state == "firing" else "has resolved" if state == "resolved" else "was found"
            )
            parts.append(f"the {name or 'matching'} alert {verb}{_bracket(shown, zh)}")
    if zh:
        return f"{service + ' 的 ' if service else ''}{'；'.join(parts)}。"
    sentence = "; ".join(parts)
    return f"For {service}, {sentence}." if service else f"{sentence[0].upper()}{sentence[1:]}."


def _knowledge_text(refs: Sequence[Ref], zh: bool) -> str:
    """A statement about the knowledge base, never about the current environment: each block's
    title line and the section it holds (the steps, the commands), quoted as written."""
    parts = []
    for ref in refs[:2]:
        head, _, rest = ref.text.partition(": ")
        body = rest.rsplit(" (", 1)[0] if rest.endswith(")") else rest
        parts.append((quote(head), quote(body, STEPS_CHARS)))
    if zh:
        listed = "；".join(f"“{head}”：“{body}”" for head, body in parts)
        return f"知识库检索到相关条目：{listed}。"
    listed = "; ".join(f'"{head}": "{body}"' for head, body in parts)
    return f"The knowledge base has a related entry: {listed}."


def negative_text(call: PlannedCall, excerpt: str, language: str) -> str:
    zh = language == "zh"
    if call.tool_name == ToolName.QUERY_PROMQL:
        return signal_calls.negative_text(call, language)
    if call.tool_name in cluster_claims.CLUSTER_TOOLS:
        return cluster_claims.negative_text(call.arguments, call.tool_name, excerpt, language)
    service = call.service if _carried(call.service, [excerpt]) else None
    term = call.term if call.term is not None and _carried(call.term.name, [excerpt]) else None
    alert = call.alert_name if _carried(call.alert_name, [excerpt]) else None
    state = call.arguments.get("state")
    state_text = (
        f"state={state}" if isinstance(state, str) and _carried(f"state={state}", [excerpt]) else None
    )
    if call.tool_name == ToolName.QUERY_METRICS:
        if zh:
            owner = f" {service} 的" if service else ""
            what = f" {alert} 告警" if alert else "匹配的告警"
            return f"当前查询未检索到{owner}{what}{_bracket(state_text or '', zh)}。"
        owner = f" for {service}" if service else ""
        what = f" of a {alert} alert" if alert else " of alerts"
        return f"This query found no matching evidence{what}{owner}{_bracket(state_text or '', zh)}."
    if call.tool_name == ToolName.LIST_SERVICES:
        closest = re.search(r"closest=([^;]+)", excerpt)
        named = call.service if _carried(call.service, [excerpt]) else None
        listed = closest.group(1).strip() if closest and _carried(closest.group(1), [excerpt]) else None
        # every known service is ranked, closest first, and the list bounded (KNOWN_LISTED): what
        # the sources do know, so the user can ask again by a name that exists
        if zh:
            more = f"；数据源已知的服务（与该名称最接近的在前）：{listed}" if listed else ""
            return f"当前查询未检索到任何数据源知道名为 {named or '该名称'} 的服务{more}。"
        more = f"; the services the sources know, closest to that name first, are {listed}" if listed else ""
        subject = f"a service named {named}" if named else "that service"
        return f"This query found no matching evidence of {subject} in any source{more}."
    if call.tool_name == ToolName.QUERY_LOGS:
        level = call.level if _carried(call.level, [excerpt]) else None
        window, until = _window_of(call, excerpt)
        if zh:
            owner = f" {service} 的" if service else ""
            level_text = f" {level} 级别" if level and term else (f" {level} " if level else "")
            what = f" {term.label_zh}日志" if term else ("日志" if service or level else "匹配的日志")
            since_text = f"（自 {window} 起）" if window else ""
            since_text = f"（{window} 至 {until}）" if window and until else since_text
            return f"当前查询未检索到{owner}{level_text}{what}{since_text}。".replace("  ", " ")
        owner = f" for {service}" if service else ""
        level_text = f"{level} " if level else ""
        what = (
            f" of {level_text}{term.label_en} logs"
            if term
            else f" of {level_text}logs"
            if level
            else " in the logs"
        )
        span = f" between {window} and {until}" if window and until else f" since {window}" if window else ""
        return f"This query found no matching evidence{what}{owner}{span}."
    if call.tool_name == ToolName.LOOKUP_KNOWLEDGE:
        if zh:
            return "当前查询未检索到匹配的知识库条目。"
        return "This query found no matching evidence in the knowledge base."
    if call.tool_name == ToolName.SUMMARIZE_LOGS:
        level = call.level if _carried(call.level, [excerpt]) else None
        since = re.search(r"since=([^;]+)", excerpt) if "since" in call.arguments else None
        window = since.group(1).strip() if since else None
        if zh:
            scope = f" {level} 及以上级别的" if level else ""
            return (
                f"当前查询未检索到{f' {service} 的' if service else ''}{scope}日志模式"
                f"{f'（自 {window} 起）' if window else ''}。"
            )
        scope = f" at {level} and above" if level else ""
        return (
            f"This query found no matching evidence of log patterns{scope}"
            f"{f' for {service}' if service else ''}{f' since {window}' if window else ''}."
        )
    nothing = hooks_of(call.tool_name).nothing
    if nothing is not None:
        return nothing(call.arguments, excerpt, language)
    if zh:
        return f"当前查询未检索到 {call.tool_name} 的匹配结果。"
    return f"This query found no matching evidence from {call.tool_name}."


def _window_of(call: PlannedCall, excerpt: str) -> tuple[str | None, str | None]:
    """The window a log query that found nothing ran over, as its excerpt states it."""
    since = re.search(r"since=([^;]+)", excerpt) if "since" in call.arguments else None
    until = re.search(r"until=([^;]+)", excerpt) if "until" in call.arguments else None
    return (since.group(1).strip() if since else None), (until.group(1).strip() if until else None)


def missing_text(call: PlannedCall, result: ToolCallResult, language: str) -> str:
    """A call whose result gives no evidence, as the could-not-check line the Composer writes for
    it: in words, never the call (readable_calls)."""
    zh = language == "zh"
    if (
        result.status == CallStatus.SUCCESS
        and result.retrieval_details.get("evidence_status") != EvidenceStatus.FAILED
    ):
        return readable_calls.not_citable(call.tool_name, call.arguments, zh)
    error = re.sub(r"\s+", " ", (result.error or "no error detail").strip())[:200]
    return readable_calls.failed(call.tool_name, call.arguments, error, zh)


def off_subject_text(call: PlannedCall, term: LogTerm, language: str) -> str:
    """A query whose returned lines do not hold the question's subject: nothing is cited."""
    return readable_calls.off_subject(call.tool_name, call.arguments, term.name, language == "zh")


def unqueried_text(term: LogTerm, language: str) -> str:
    """A term of the question that no call searched (a narrow task queries one log term)."""
    if language == "zh":
        return f"问题还提到 {term.label_zh}，该关键字本次未能查询（未单独为它发起查询）。"
    return f"The question also names {term.label_en}; it was not queried on its own."


def claim(claim_id: str, claim_type: str, text: str, bindings: list[JSON]) -> JSON:
    return {
        "claim_id": claim_id,
        "claim_type": claim_type,
        "claim_text": text,
        "support_level": "direct",
        "evidence_bindings": bindings,
    }


def evidence(claims: list[JSON], missing_info: list[str], actions: list[JSON]) -> JSON:
    out: dict[str, Any] = {
        "answer_version": "executor_evidence_v2",
        "claims": claims,
        "hypotheses": [],
        "recommended_actions": actions,
        "missing_info": missing_info,
    }
    return out


def safe_text(text: str, excerpts: Sequence[str], *, negative: bool, language: str) -> str:
    """`text` when its every fact is in the excerpts, else a plain template that states nothing more."""
    facts = critical_facts(text)
    if all(fact_supported(fact, excerpts, negative_claim=negative) for fact in facts):
        return text
    zh = language == "zh"
    if negative:
        return "当前查询未检索到匹配证据。" if zh else "This query found no matching evidence."
    first = quote(excerpts[0].split(" | ")[0])
    return f"检索到匹配记录：“{first}”。" if zh else f'This query found a matching record: "{first}".'
