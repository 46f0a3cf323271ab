"""OfflinePlanner: picks the skill whose alert names and keywords the question matches best."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evigate.server.agents.base import JSON, Skill, StageOutput
from evigate.server.agents.offline import cluster_calls, relevance_calls, signal_calls
from evigate.server.agents.offline.calls import describe_call, plan_calls
from evigate.server.deadline import Deadline
from evigate.server.sources.kubernetes.names import ClusterNames
from evigate.server.sources.ports import ClusterSource
from evigate.server.sources.services import CatalogView, ServiceCatalog
from evigate.server.sources.signals import SignalCatalog
from evigate.server.tools import default_registry
from evigate.server.understanding.entities import Entities, catalog_view, extract

PROMPT_VERSION = "offline-planner-v1"
# An alert-name match is an exact key; a keyword can be incidental.
_ALERT_WEIGHT = 3
_ENTITY_WEIGHT = 2
_MAX_SKILL_STEPS = 3


def _mentions(text: str, key: str) -> bool:
    # ASCII keywords are whole words ("load" is not in "upload"); Chinese ones are substrings.
    if key.isascii():
        return re.search(r"(?<![a-z0-9])" + re.escape(key) + r"(?![a-z0-9])", text) is not None
    return key in text


def _score(skill: Skill, question: str, entities: Entities) -> tuple[int, list[str]]:
    lowered = question.lower()
    reasons: list[str] = []
    score = 0
    alerts = {name.lower() for name in entities.alert_names}
    for alert in skill.alert_names:
        if alert.lower() in alerts or alert.lower() in lowered:
            score += _ALERT_WEIGHT
            reasons.append(alert)
    # A keyword that is one of the question's own entities (HikariCP, OutOfMemoryError) says more
    # than a generic word such as "logs".
    named = {term.name.lower() for term in entities.log_terms} | alerts
    for keyword in skill.keywords:
        key = keyword.lower()
        if key in named:
            score += _ENTITY_WEIGHT
            reasons.append(keyword)
        elif key and _mentions(lowered, key):
            score += 1
            reasons.append(keyword)
    return score, reasons


def select_skill(
    question: str, entities: Entities, skills: Sequence[Skill]
) -> tuple[Skill | None, list[str]]:
    """The best-scoring skill (ties: catalog order), or None when nothing matches."""
    best: Skill | None = None
    best_score = 0
    best_reasons: list[str] = []
    for skill in skills:
        score, reasons = _score(skill, question, entities)
        if score > best_score:
            best, best_score, best_reasons = skill, score, reasons
    return best, best_reasons


def _relevant_steps(skill: Skill, tools: set[str]) -> list[str]:
    """Skill steps that use a tool this question needs (a narrow question runs nothing else)."""
    steps = [step for step in skill.steps if any(tool in step for tool in tools)]
    return steps[:_MAX_SKILL_STEPS]


def _resolution_steps(entities: Entities, zh: bool) -> list[str]:
    """How each service name of the question was read: the canonical name chosen, or unknown."""
    steps = []
    for match in entities.service_matches:
        if match.how == "exact" and match.mention == match.name:
            continue
        if match.how == "semantic":
            steps.append(
                f"“{match.mention}” 按语义相似度匹配到服务 {match.name}（相似度 {match.score:.2f}，"
                f"领先次优的 {match.runner_up} {match.margin:.2f}）"
                if zh
                else f'"{match.mention}" means {match.name} by embedding similarity ({match.score:.2f}, '
                f"{match.margin:.2f} ahead of {match.runner_up}); no name in the question matched"
            )
            continue
        how = {
            "exact": "大小写/分隔符" if zh else "case/separators",
            "alias": "别名" if zh else "alias",
            "fuzzy": "词序/拼写相近" if zh else "word order or a one-letter difference",
        }.get(match.how, "部分名称" if zh else "partial name")
        steps.append(
            f"“{match.mention}” 按{how}匹配到服务目录中的 {match.name}"
            if zh
            else f'"{match.mention}" matches {match.name} in the service catalog ({how})'
        )
    for name in entities.unknown_services:
        steps.append(
            f"{name} 不在服务目录中：调用 list_services 确认并列出最接近的已知服务，不替换为其他服务"
            if zh
            else f"{name} is in no source's service catalog: confirm with list_services and name the "
            "closest known services; never substitute another service"
        )
    return steps


class OfflinePlanner:
    def __init__(
        self,
        *,
        catalog: ServiceCatalog | None = None,
        signals: SignalCatalog | None = None,
        cluster: ClusterSource | None = None,
    ) -> None:
        self._catalog = catalog
        self._signals = signals  # set when a Prometheus is configured: metric questions query it
        self._cluster = cluster  # set when a cluster source is configured (cluster_calls.py)

    async def plan(
        self, query: str, language: str, skills: Sequence[Skill], deadline: Deadline
    ) -> StageOutput:
        deadline.check()
        view = await catalog_view(self._catalog, query, refresh_on_miss=True)
        names = await cluster_calls.names_of(self._cluster)
        return StageOutput(self.plan_sync(query, language, skills, view, names), PROMPT_VERSION)

    def plan_sync(
        self,
        query: str,
        language: str,
        skills: Sequence[Skill],
        view: CatalogView | None = None,
        names: ClusterNames | None = None,
    ) -> JSON:
        zh = language != "en"
        entities = extract(query, view)
        calls = plan_calls(entities, query, default_registry().names())
        calls = signal_calls.metric_calls(query, entities, self._signals, calls)
        calls = cluster_calls.merged(calls, cluster_calls.plan(query, names), names)
        calls += relevance_calls.relevance_calls(entities, query, default_registry().names())
        skill, matched = select_skill(query, entities, skills)
        if skill is not None:
            reason = (
                f"问题命中 skill {skill.name} 的告警名/关键字：{', '.join(matched)}"
                if zh
                else f"the question matches {skill.name} on: {', '.join(matched)}"
            )
        else:
            reason = (
                "没有 skill 的告警名或关键字与问题匹配，按问题中的实体直接查询"
                if zh
                else "no skill's alert names or keywords match the question; querying its entities directly"
            )
        steps = _resolution_steps(entities, zh)
        steps.extend(
            (f"调用 {describe_call(call)}" if zh else f"call {describe_call(call)}") for call in calls
        )
        if entities.survey:
            steps.append(
                "最近一小时没有结果的日志检查依次扩大到 6 小时、24 小时和全部日志，"
                "并说明结果来自哪个时间窗口；"
                "按严重程度、数量和时间排序各项发现；查询找到的告警对应的 runbook；说明哪些检查无法执行；"
                "不陈述证据未给出的根因"
                if zh
                else "a log check that finds nothing in the last hour is repeated over 6 h, 24 h and all "
                "the logs, saying which window a finding comes from; rank the findings by severity, count "
                "and recency; look up the runbooks of the alerts found; say which checks could not run; "
                "name no cause the evidence does not state"
            )
        if skill is not None:
            steps.extend(_relevant_steps(skill, {call.tool_name for call in calls}))
        if calls:
            steps.append(
                "仅依据工具返回陈述 observation / negative_observation；"
                "无结果时不放宽关键字、不删除服务名、不扩大范围"
                if zh
                else "state only observation / negative_observation from the tool results; "
                "after no evidence, "
                "do not widen the keyword, drop the service or broaden the scope"
            )
        else:
            steps.append(
                "问题未给出服务、告警名或日志关键字：记录缺失信息，不调用工具"
                if zh
                else "the question names no service, alert or log term: "
                "record the missing information, call no tool"
            )
        scope = {
            "services": list(entities.services),
            "unknown_services": list(entities.unknown_services),
            "alert_names": list(entities.alert_names),
            "log_terms": [term.name for term in entities.log_terms],
            "level": entities.level,
            "window_minutes": entities.window_minutes,
            "intents": list(entities.intents),
        }
        summary = ", ".join(f"{key}={value}" for key, value in scope.items() if value)
        if entities.survey:
            reasoning = (
                f"宽泛问题（{summary}）：对该服务做一次概览检查，只陈述各检查返回的内容。"
                if zh
                else f"broad question ({summary}): survey the service, state only what each check returned."
            )
        else:
            reasoning = (
                f"窄范围问题（{summary or '无实体'}）：只执行问题要求的精确查询。"
                if zh
                else f"narrow question ({summary or 'no entities'}): run only the exact queries it asks for."
            )
        return {
            "selected_skill": skill.name if skill is not None else None,
            "selection_reason": reason,
            "plan": steps,
            "reasoning": reasoning,
            "tool_calls": [{"tool_name": c.tool_name, "arguments": dict(c.arguments)} for c in calls],
        }
