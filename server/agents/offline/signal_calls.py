"""Metric-value questions for the offline agents: "payment-service 的 CPU 现在多少？", "what's the p99
latency of checkout right now?" → one query_promql call with the signal the question names.

Kept apart from the entity / intent extraction (calls.py, entities.py) on purpose: the planner and
the executor each add `plan(...)` to their calls, and claims.py phrases a series result with
`observation_text` / `negative_text`. Only when a Prometheus is configured does the composition root
hand the agents a signal catalog; without one this module plans nothing and the answers are
unchanged. The claim quotes the series' ref text (its labels, value and time) verbatim, so the
Gatekeeper's verbatim check and the Verifier's fact check hold by construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evigate.rules.enums import ToolName
from evigate.rules.types import EvidenceRef as Ref
from evigate.server.agents.offline import survey
from evigate.server.agents.offline.calls import PlannedCall, with_signal_calls
from evigate.server.sources.signals import SignalCatalog
from evigate.server.understanding.cause import asks_cause
from evigate.server.understanding.change import asks_change
from evigate.server.understanding.entities import Entities

# An explicit alert question ("CPU 告警还在吗") asks about the alert, not the metric, unless it also
# asks for the value ("what is"): the words for either.
_ALERT_WORDS = ("告警", "报警", "警报", "alert", "alarm", "firing")
_VALUE_MARKERS = (
    "多少",
    "多高",
    "多大",
    "数值",
    "是几",
    "how much",
    "how high",
    "what is",
    "what's",
    "value",
)
# A service named without a -service suffix: "of checkout", "checkout 的 CPU".
_EN_SERVICE = re.compile(r"(?<![a-z0-9_-])(?:of|for|on)\s+(?:the\s+)?([a-z][a-z0-9_.-]*[a-z0-9])", re.I)
_ZH_SERVICE = re.compile(r"([A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9])\s*的")
_NOT_SERVICES = frozenset({"the", "this", "that", "it", "service", "services", "now", "right", "my", "our"})
_VALUE = re.compile(r"^(?P<head>\S+\{[^}]*\}) value=(?P<value>.+?) at (?P<at>.+)$")


def asks_value(question: str) -> bool:
    """Whether the question asks for a value ("how much", "多少", "what is"), not a state or a time."""
    lowered = question.lower()
    return any(marker in lowered for marker in _VALUE_MARKERS)


def _service(question: str, entities: Entities) -> str | None:
    if entities.services:
        return entities.services[0]
    for pattern in (_ZH_SERVICE, _EN_SERVICE):
        for match in pattern.finditer(question):
            name = match.group(1)
            if name.lower() not in _NOT_SERVICES:
                return name
    return None


def _since(minutes: int | None) -> str | None:
    if minutes is None:
        return None
    return f"{minutes // 60}h" if minutes % 60 == 0 else f"{minutes}m"


def plan(question: str, entities: Entities, catalog: SignalCatalog | None) -> list[PlannedCall]:
    """The query_promql call a metric-value question asks for (none without a catalog, a signal or
    a service). A window in the question ("过去 30 分钟") makes it a range query."""
    if catalog is None:
        return []
    signal = catalog.detect(question)
    lowered = question.lower()
    about_alert = any(w in lowered for w in _ALERT_WORDS) and not asks_value(question)
    if signal is None or about_alert:
        return []
    service = _service(question, entities)
    if service is None:
        return []
    arguments = {"signal": signal.name, "service": service}
    since = _since(entities.window_minutes)
    if since is not None:
        arguments["since"] = since
    return [PlannedCall(ToolName.QUERY_PROMQL, arguments, service, window_minutes=entities.window_minutes)]


# Words of a question that ask for a metric's value, trend or comparison (a discovered metric of
# the service answers it when the signal catalog has none).
_METRIC_WORDS = (
    "how many", "how much", "how long", "ratio", "rate", "latency", "slow", "slower", "faster",
    "response time", "memory", "growing", "grow", "climb", "rose", "fell", "drop", "p99", "p95",
    "percent", "version", "retrain", "age", "connections",
    "多少", "比例", "延迟", "命中率", "内存", "增长", "上升", "下降", "慢", "版本", "多久", "连接",
)  # fmt: skip
# What a catalog signal does not answer: a comparison, a trend, a share, a count, a label.
_BEYOND_SIGNAL = (
    "than", "version", "grow", "climb", "rose", "fell", "drop", "how many", "ratio", "share",
    "from what", "upstream", "比", "版本", "增长", "上升", "下降", "从多少", "比例", "命中率", "上游",
)  # fmt: skip
DISCOVERY_WINDOW = "12h"


def discover(question: str, entities: Entities, catalog: SignalCatalog | None) -> list[PlannedCall]:
    """The service's own metric the question means (query_promql `about`): for a question about a
    value, a trend or a comparison of the first service it names, when a Prometheus is configured."""
    lowered = question.lower()
    if catalog is None or not entities.services or not any(w in lowered for w in _METRIC_WORDS):
        return []
    if (
        catalog.detect(question) is not None
        and not any(w in lowered for w in _BEYOND_SIGNAL)
        and not (entities.survey and asks_cause(question))
    ):
        return []  # the catalog's signal answers a plain value question ("X 的内存现在多少？")
    service = entities.services[0]  # the subject; a second name is often a label value (an upstream)
    since = _since(entities.window_minutes) or DISCOVERY_WINDOW
    arguments = {"service": service, "about": question.strip(), "since": since}
    return [PlannedCall(ToolName.QUERY_PROMQL, arguments, service, window_minutes=entities.window_minutes)]


# A metric question about no service: a namespace's or the whole store's metrics ("CPU per pod in
# the app-159 namespace", "CPU per namespace", "which CPU metrics are collected?").
_STORE_WORDS = (
    "cpu", "memory", "metric", "metrics", "prometheus", "graph", "lag", "throttl", "latency",
    "指标", "图", "内存", "延迟", "积压",
)  # fmt: skip
_WIDE = re.compile(
    r"\b(?:per|by|each|every|all)\s+(?:namespace|pod|node)s?\b|\bcluster\b|集群|按\s*namespace|各个?\s*(?:namespace|pod)",
    re.I,
)
_NAMESPACE = (
    re.compile(r"\b(?:in|of|for)\s+(?:the\s+)?([a-z0-9][a-z0-9-]*[a-z0-9])\s+namespace\b", re.I),
    re.compile(r"\bnamespace\s+([a-z0-9][a-z0-9-]*[a-z0-9])(?![\w-])", re.I),
    re.compile(r"([a-z0-9][a-z0-9-]*[a-z0-9])\s*命名空间", re.I),
)


def scoped(question: str, entities: Entities, catalog: SignalCatalog | None) -> list[PlannedCall]:
    """query_promql(about, namespace?) for a metric question that names no known service but a
    namespace, or asks across the cluster (per namespace, per pod, which metrics exist)."""
    lowered = question.lower()
    if catalog is None or entities.services or not any(w in lowered for w in _STORE_WORDS):
        return []
    namespace = next((m.group(1) for p in _NAMESPACE if (m := p.search(question)) is not None), None)
    if namespace is None and _WIDE.search(question) is None:
        return []
    arguments = {"about": question.strip(), "since": _since(entities.window_minutes) or DISCOVERY_WINDOW}
    if namespace is not None:
        arguments["namespace"] = namespace
    return [PlannedCall(ToolName.QUERY_PROMQL, arguments, None, window_minutes=entities.window_minutes)]


def metric_calls(
    question: str, entities: Entities, catalog: SignalCatalog | None, planned: list[PlannedCall]
) -> list[PlannedCall]:
    """`planned` with the metric calls the question asks for: a namespace's or the store's metric in
    place of every other call; a survey's key signals and discovered metric; a signal's value."""
    wide = scoped(question, entities, catalog)
    if wide:
        return wide
    if entities.survey and catalog is not None:
        # "since when?" / "what changed?": the signals over the hours where their change point is
        since = DISCOVERY_WINDOW if asks_change(question) else survey.SURVEY_WINDOW
        signals = survey.signal_calls(entities, catalog.signals, since)
        return [*planned, *signals, *discover(question, entities, catalog)]
    if not entities.unknown_services or entities.services:
        signal = plan(question, entities, catalog) + discover(question, entities, catalog)
        return with_signal_calls(planned, signal, entities, asks_value(question))
    return planned


def observation_text(call: PlannedCall, refs: Sequence[Ref], language: str) -> str:
    """`payment-service 的 cpu 为 0.42 (42% of a core)（2026-12-02 04:30:05，cpu{service=...}）`, or the
    range line quoted as it is."""
    signal = call.arguments.get("signal", "metric")
    service = call.service or ""
    zh = language == "zh"
    if "about" in call.arguments:  # a discovered metric: every series quoted as it is
        quoted = ("；" if zh else "; ").join(f"“{ref.text}”" if zh else f'"{ref.text}"' for ref in refs)
        # No service name here: the series carry the store's spelling of it, which the claim quotes.
        return f"相关的指标序列：{quoted}。" if zh else f"The metric series that answer it: {quoted}."
    instant = _VALUE.match(refs[0].text)
    if instant is None:  # a range: window, first / last / min / max are all in the line
        if zh:
            return f"{service} 的 {signal} 指标查询结果：“{refs[0].text}”。"
        return f'The {signal} of {service}: "{refs[0].text}".'
    head, value, at = instant.group("head", "value", "at")
    if zh:
        return f"{service} 的 {signal} 为 {value}（{at}，{head}）。"
    return f"The {signal} of {service} is {value} at {at} ({head})."


def negative_text(call: PlannedCall, language: str) -> str:
    if "about" in call.arguments:
        namespace = call.arguments.get("namespace")
        if language == "zh":
            owner = call.service or (f"命名空间 {namespace}" if namespace else "指标库中")
            return f"当前查询未检索到 {owner} 与问题相关的指标序列。"
        owner = call.service or (f"namespace {namespace}" if namespace else "the metrics store")
        return f"This query found no matching evidence of a metric series of {owner} for the question."
    signal = call.arguments.get("signal", "metric")
    if language == "zh":
        return f"当前查询未检索到 {call.service} 的 {signal} 指标序列。"
    return f"This query found no matching evidence of a {signal} series for {call.service}."
