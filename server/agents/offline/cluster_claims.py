"""How the offline executor states what the cluster tools returned: per object its problems, each
container's state and last state with reason, exit code and the API's message in full, its image,
the scheduler's message; per event its type, reason, count and message; per revision its changes.
Every value is copied from the item the ref was written from, so the claim names only what its
excerpt holds; the connecting words are in the question's language."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules.enums import ToolName
from evigate.rules.types import EvidenceRef as Ref
from evigate.server.tools.calls import ToolCallResult

MAX_ITEMS = 3
CLUSTER_TOOLS = frozenset({ToolName.QUERY_K8S, ToolName.QUERY_K8S_EVENTS, ToolName.K8S_ROLLOUT_HISTORY})
_ARRAYS: dict[str, str] = {
    ToolName.QUERY_K8S: "objects",
    ToolName.QUERY_K8S_EVENTS: "events",
    ToolName.K8S_ROLLOUT_HISTORY: "revisions",
}


def _items(result: ToolCallResult, refs: Sequence[Ref]) -> list[Mapping[str, Any]]:
    raw = result.raw_result or {}
    items = raw.get(_ARRAYS[result.tool_name]) or []
    out = []
    for ref in refs:
        index = ref.raw_path.rsplit("[", 1)[-1].rstrip("]")
        if index.isdigit() and int(index) < len(items):
            out.append(items[int(index)])
    return out


def _state(part: Mapping[str, Any], zh: bool) -> str:
    words = [str(part.get("state", "")), str(part.get("reason", ""))]
    if "exit_code" in part:
        words.append(f"exit_code={part['exit_code']}")
    if part.get("signal"):
        words.append(str(part["signal"]))
    text = " ".join(w for w in words if w)
    if part.get("message"):
        text += f"（{part['message']}）" if zh else f" ({part['message']})"
    return text


def _object(item: Mapping[str, Any], zh: bool) -> str:
    where = "/".join(str(item[k]) for k in ("namespace", "name") if item.get(k))
    problems = "; ".join(str(p) for p in item.get("problems") or [])
    head = f"{item.get('kind')} {where}"
    parts = [f"problems=[{problems}]"]  # problems=[] as the ref writes it: no negation to support
    for key in (
        "phase",
        "ready",
        "restarts",
        "desired",
        "current",
        "max",
        "failed",
        "storage_class",
        "requested",
    ):
        if key in item:
            parts.append(f"{key}={item[key]}")
    for c in item.get("containers") or []:
        states = [_state(c[k], zh) for k in ("state", "last_state") if k in c]
        label = "上次" if zh else "last"
        if len(states) == 2:
            states[1] = f"{label} {states[1]}"
        parts.append(f"{c.get('name')}: {', '.join(states)}, image={c.get('image')}")
    for key in ("scheduling", "node_selector", "conditions", "metrics", "log_tail"):
        value = item.get(key)
        if value:
            # lists as the ref writes them (key=[a; b]), so the claim's key=value facts are the ref's
            parts.append(
                f"{key}=[{'; '.join(map(str, value))}]" if isinstance(value, list) else f"{key}={value}"
            )
    return f"{head}: {'; '.join(parts)}"


def _event(item: Mapping[str, Any]) -> str:
    return (
        f"{item.get('type')} {item.get('reason')} ×{item.get('count')} {item.get('object')}"
        f"{' (' + str(item['workload']) + ')' if item.get('workload') else ''}: {item.get('message')}"
        f" (last={item.get('last')})"
    )


def _revision(item: Mapping[str, Any]) -> str:
    changes = "; ".join(map(str, item.get("changes") or []))
    current = " current" if item.get("current") else ""
    created = f"created={item.get('created')}"
    return f"{item.get('deployment')} revision={item.get('revision')}{current} {created}: {changes}"


def observation_text(result: ToolCallResult, refs: Sequence[Ref], language: str) -> str:
    zh = language == "zh"
    items = _items(result, refs)[:MAX_ITEMS]
    if result.tool_name == ToolName.QUERY_K8S:
        lines = [_object(i, zh) for i in items]
        lead = "集群中的对象状态" if zh else "The cluster shows"
    elif result.tool_name == ToolName.QUERY_K8S_EVENTS:
        lines = [_event(i) for i in items]
        lead = "Kubernetes 事件" if zh else "Kubernetes events"
    else:
        lines = [_revision(i) for i in items]
        lead = "发布记录" if zh else "The rollout history shows"
    return f"{lead}：" + "；".join(lines) + "。" if zh else f"{lead}: " + " | ".join(lines) + "."


def negative_text(call_arguments: Mapping[str, Any], tool_name: str, excerpt: str, language: str) -> str:
    """What a cluster call that found nothing says: the name asked for and, when the cluster has
    none of that name, the closest names it has."""
    zh = language == "zh"
    found = re.search(r"closest=([^;]+)", excerpt)
    closest = found.group(1).strip() if found and found.group(1).strip() != "none" else ""
    name = str(
        call_arguments.get("name") or call_arguments.get("object") or call_arguments.get("deployment") or ""
    )
    namespace = str(call_arguments.get("namespace") or "")
    if tool_name == ToolName.QUERY_K8S_EVENTS:
        scope = " ".join(x for x in (namespace, name) if x)
        return (
            f"当前查询未检索到 {scope} 的 Kubernetes 事件。"
            if zh
            else f"This query found no matching evidence of Kubernetes events for {scope or 'the query'}."
        )
    what = "Deployment 发布记录" if tool_name == ToolName.K8S_ROLLOUT_HISTORY else "对象"
    if zh:
        where = f"命名空间 {namespace} 中" if namespace else "集群中"
        more = f"；集群中最接近的名称是：{closest}" if closest else ""
        return (
            f"当前查询未检索到{where}名为 {name} 的{what}{more}。"
            if name
            else f"当前查询未检索到{where}有问题的对象。"
        )
    where = f" in namespace {namespace}" if namespace else " in the cluster"
    more = f"; the closest names the cluster has are {closest}" if closest else ""
    if not name:
        return f"This query found no matching evidence of objects with problems{where}."
    return f"This query found no matching evidence of an object named {name}{where}{more}."
