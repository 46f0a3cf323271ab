"""OfflineComposer: the user's answer from templates, using only the material the Verifier allowed.

No new facts: claim texts are repeated as written; a negative observation is only ever phrased as
"当前查询未检索到…" / "this query found no matching evidence…"; actions are evidence collection only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules.enums import ClaimType, Verdict
from evigate.server.agents.base import JSON, StageOutput
from evigate.server.agents.offline.facts import has_scoped_negative_phrase, is_overstatement
from evigate.server.deadline import Deadline

PROMPT_VERSION = "offline-composer-v1"

# Remediation is not this pipeline's to recommend; an action naming one of these is dropped.
_REMEDIATION = (
    "重启",
    "扩容",
    "回滚",
    "修改配置",
    "调大",
    "增加连接池",
    "修复",
    "升级",
    "restart",
    "scale",
    "rollback",
    "roll back",
    "increase",
    "fix ",
    "upgrade",
    "reconfigure",
)

_TEXT = {
    "zh": {
        Verdict.PASS: "",
        Verdict.LOW_CONFID: "证据不足，以下结论置信度较低。",
        Verdict.REJECT: "没有通过校验的证据，无法给出可靠结论。",
        "intro": "根据本次查询返回的证据：",
        "missing": "缺少的信息：",
        "actions": "建议的下一步（仅限继续收集证据）：",
        "none": "本次没有可以确认的结论。",
        "negative_generic": "当前查询未检索到匹配证据。",
        "scope_note": "注：未检索到匹配证据仅针对本次查询条件。",
        "summary_none": "本次没有可以确认的结论",
        "sep": "",  # each claim text ends with its own full stop
    },
    "en": {
        Verdict.PASS: "",
        Verdict.LOW_CONFID: "The evidence is insufficient; the following has low confidence.",
        Verdict.REJECT: "The evidence did not pass verification; no reliable conclusion can be given.",
        "intro": "Based on the evidence this query returned:",
        "missing": "Missing information:",
        "actions": "Suggested next steps (evidence collection only):",
        "none": "Nothing could be confirmed this time.",
        "negative_generic": "This query found no matching evidence.",
        "scope_note": "Note: finding no matching evidence holds only for this query's filters.",
        "summary_none": "Nothing could be confirmed",
        "sep": " ",
    },
}


def _strings(value: Any) -> list[str]:
    return (
        [item for item in value if isinstance(item, str) and item.strip()] if isinstance(value, list) else []
    )


def _maps(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _claim_sentence(claim: Mapping[str, Any], texts: Mapping[str, str]) -> str | None:
    text = claim.get("claim_text")
    if not isinstance(text, str) or not text.strip():
        return None
    if claim.get("claim_type") == ClaimType.NEGATIVE_OBSERVATION:
        # Only the scoped phrasing may reach the user, whoever wrote the claim.
        if not has_scoped_negative_phrase(text) or is_overstatement(text):
            return texts["negative_generic"]
    elif is_overstatement(text):
        return None
    return text.strip()


def _is_collection_action(action: Mapping[str, Any]) -> bool:
    text = action.get("action_text")
    if not isinstance(text, str) or not text.strip():
        return False
    lowered = text.lower()
    return not any(word in lowered for word in _REMEDIATION) and not is_overstatement(text)


def compose(composer_input: Mapping[str, Any]) -> JSON:
    language = "en" if composer_input.get("language") == "en" else "zh"
    texts = _TEXT[language]
    verdict = str(composer_input.get("verdict", Verdict.REJECT)).upper()
    claims = _maps(composer_input.get("allowed_claims"))
    hypotheses = _maps(composer_input.get("allowed_hypotheses"))
    missing = _strings(composer_input.get("missing_info"))
    actions = [
        {"action_text": str(a["action_text"]), "reason": str(a.get("reason", ""))}
        for a in _maps(composer_input.get("recommended_actions"))
        if _is_collection_action(a)
    ]

    sentences = [s for s in (_claim_sentence(claim, texts) for claim in claims) if s is not None]
    hypothesis_texts = [
        str(h["hypothesis_text"])
        for h in hypotheses
        if isinstance(h.get("hypothesis_text"), str) and not is_overstatement(str(h["hypothesis_text"]))
    ]
    has_negative = any(claim.get("claim_type") == ClaimType.NEGATIVE_OBSERVATION for claim in claims)

    lines: list[str] = []
    header = texts.get(verdict, texts[Verdict.REJECT])
    if header:
        lines.append(header)
    if sentences:
        lines.append(texts["intro"])
        lines.extend(f"- {sentence}" for sentence in sentences)
    elif not missing:
        lines.append(texts["none"])
    if hypothesis_texts:
        label = "待验证的方向（未经证实）：" if language == "zh" else "Unconfirmed directions to check:"
        lines.append(label)
        lines.extend(f"- {text}" for text in hypothesis_texts)
    if missing:
        lines.append(texts["missing"])
        lines.extend(f"- {item}" for item in missing)
    if actions:
        lines.append(texts["actions"])
        lines.extend(f"- {action['action_text']}" for action in actions)
    if has_negative:
        lines.append(texts["scope_note"])

    if sentences:
        summary = texts["sep"].join(sentences)
    elif missing:
        summary = missing[0]
    else:
        summary = texts["summary_none"]
    if header:
        summary = f"{header}{'' if language == 'zh' else ' '}{summary}"
    return {
        "answer_summary": summary,
        "recommended_actions": actions,
        "user_facing_answer": "\n".join(lines),
    }


class OfflineComposer:
    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        deadline.check()
        return StageOutput(compose(composer_input), PROMPT_VERSION)
