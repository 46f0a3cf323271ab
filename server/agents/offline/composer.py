"""OfflineComposer: the user's answer as checked sentences, using only the material the Verifier
allowed (answer_writer writes them, answer_text joins them into the text the user reads).

No new facts: every value is copied from a verified excerpt; a negative observation is only ever
phrased as "当前查询未检索到…" / "this query found no matching evidence…"; actions are evidence
collection only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evigate.rules import answer_text, sentence_material
from evigate.rules.enums import CheckStatus
from evigate.rules.sentence_types import SentenceMaterial
from evigate.server.agents.base import JSON, StageOutput
from evigate.server.agents.offline import answer_writer
from evigate.server.agents.offline.facts import is_overstatement
from evigate.server.deadline import Deadline

PROMPT_VERSION = "offline-composer-v2"

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


def _maps(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _is_collection_action(action: Mapping[str, Any]) -> bool:
    text = action.get("action_text")
    if not isinstance(text, str) or not text.strip():
        return False
    lowered = text.lower()
    return not any(word in lowered for word in _REMEDIATION) and not is_overstatement(text)


def compose(composer_input: Mapping[str, Any], material: SentenceMaterial | None = None) -> JSON:
    """The structured answer (sentences, their text, the language) written from `material`, the
    sentence check's material of this session; without it, from the Composer's input alone (every
    binding of an allowed claim taken as verified, no failed calls beyond the missing items)."""
    language = "en" if composer_input.get("language") == "en" else "zh"
    if material is None:
        material = material_of(composer_input)
    sentences = answer_writer.write(composer_input, material)
    actions = collection_actions(composer_input)
    return answer_text.output(sentences, answer_writer.claim_ids(material), language, actions)


def collection_actions(composer_input: Mapping[str, Any]) -> list[JSON]:
    """The input's recommended actions that collect evidence (no remediation, no over-statement)."""
    return [
        {"action_text": str(a["action_text"]), "reason": str(a.get("reason", ""))}
        for a in _maps(composer_input.get("recommended_actions"))
        if _is_collection_action(a)
    ]


def material_of(composer_input: Mapping[str, Any]) -> SentenceMaterial:
    """The sentence check's material from the Composer's input alone: a claim without bindings
    stands as its own excerpt."""
    claims = [
        claim
        if claim.get("evidence_bindings")
        else {**claim, "evidence_bindings": [{"evidence_excerpt": str(claim.get("claim_text", ""))}]}
        for claim in _maps(composer_input.get("allowed_claims"))
    ]
    passed = [
        {"claim_id": claim.get("claim_id"), "binding_index": index, "status": CheckStatus.PASS}
        for claim in claims
        for index, _ in enumerate(claim.get("evidence_bindings") or [])
    ]
    whole = {**composer_input, "allowed_claims": claims}
    return sentence_material.build(whole, {"checked_bindings": passed}, ())


class OfflineComposer:
    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        return await self.compose_from(composer_input, deadline, None)

    async def compose_from(
        self, composer_input: JSON, deadline: Deadline, material: SentenceMaterial | None
    ) -> StageOutput:
        deadline.check()
        return StageOutput(compose(composer_input, material), PROMPT_VERSION)
