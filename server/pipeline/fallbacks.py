"""What the answer says when a stage ran offline (docs/design.md §2.2): the user learns which
stage's model output was not used and why, in their language. The notice names stages only, no
fact, so it is added after the answer check."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evigate.server.agents.base import OFFLINE_FALLBACK

JSON = dict[str, Any]
_STAGE_ZH = {"planner": "规划", "executor": "取证", "verifier": "校验", "composer": "回答撰写"}
_WHY = {
    "endpoint_unavailable": ("模型端点不可用", "the model endpoint was unavailable"),
    "endpoint_refused": ("模型端点拒绝了请求", "the model endpoint refused the request"),
    "unusable_output": ("模型输出不可用", "the model's output was unusable"),
    "endpoint_bad_reply": ("模型端点回复的不是补全", "the model endpoint sent no completion"),
}


def offline_stages(notes: Sequence[JSON]) -> dict[str, str]:
    """Each stage that ran offline, with the first reason recorded for it."""
    stages: dict[str, str] = {}
    for note in notes:
        if note.get("kind") == OFFLINE_FALLBACK:
            reason = str(note.get("detail", "")).split(":", 1)[0]
            stages.setdefault(str(note.get("stage", "")), reason)
    return stages


def notice(notes: Sequence[JSON], language: str) -> str | None:
    stages = offline_stages(notes)
    if not stages:
        return None
    zh = language != "en"
    parts = []
    for stage, reason in stages.items():
        why_zh, why_en = _WHY.get(reason, _WHY["unusable_output"])
        parts.append(f"{_STAGE_ZH.get(stage, stage)}（{stage}）：{why_zh}" if zh else f"{stage}: {why_en}")
    if zh:
        return "注：以下阶段改用离线规则运行——" + "；".join(parts) + "。"
    return "Note: these stages ran offline, on their rules — " + "; ".join(parts) + "."


def with_notice(composer_output: JSON, notes: Sequence[JSON], language: str) -> JSON:
    """The composer output with the offline notice appended to the user-facing answer."""
    text = notice(notes, language)
    if text is None:
        return composer_output
    answer = str(composer_output.get("user_facing_answer", "")).rstrip()
    return {**composer_output, "user_facing_answer": f"{answer}\n{text}" if answer else text}
