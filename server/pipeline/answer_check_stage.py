"""The answer check after the Composer (rules.answer_check): nothing the user sees states a fact
that the allowed material lacks.

The Composer's output, after the answer guard, is checked before it is stored or sent. A rejected
output is recorded with its violations, and the answer is composed by code from the allowed
material (the offline composer), in the user's language; a slot the model rewrote is refused alone
(server.pipeline.compose_slots). The verdict never rises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules import answer_check
from evigate.rules.answer_check import AnswerMaterial
from evigate.rules.enums import ClaimType
from evigate.rules.sentence_types import SentenceCheckResult
from evigate.server.pipeline import derivation
from evigate.storage.records import InvocationRecord

JSON = dict[str, Any]
COMPOSER = "composer"
COMPOSER_AND_CODE = "composer_and_code"  # the model wrote some slot sentences, code's draft the rest
OFFLINE_FALLBACK = "offline_fallback"
COMPOSED_BY_CODE = "composed_by_code"  # no allowed claim: nothing for a model to write


def material_for(
    composer_input: JSON,
    gatekeeper_result: JSON,
    invocations: Sequence[InvocationRecord],
    forbidden: Sequence[str] = (),
) -> AnswerMaterial:
    """What the answer may say: the allowed claims and their verified excerpts, the question, the
    session's tool names and the errors its tools returned, and the allowed hypotheses. Not the
    tools' arguments: a model chose them, and a pod it only asked about is no fact of the session."""
    facts: list[str] = [str(composer_input.get("original_query", ""))]
    root_causes: list[str] = []
    for claim in composer_input.get("allowed_claims") or []:
        if not isinstance(claim, dict):
            continue
        text = claim.get("claim_text")
        if isinstance(text, str):
            facts.append(text)
            if claim.get("claim_type") == ClaimType.ROOT_CAUSE:
                root_causes.append(text)
        facts.extend(derivation.verified_excerpts(claim, gatekeeper_result))
    for inv in invocations:
        facts.append(inv.tool_name)
        if inv.error:
            facts.append(inv.error)
    hypotheses = [
        str(h["hypothesis_text"])
        for h in composer_input.get("allowed_hypotheses") or []
        if isinstance(h, dict) and isinstance(h.get("hypothesis_text"), str)
    ]
    return AnswerMaterial(
        facts=tuple(f for f in facts if f),
        hypotheses=tuple(hypotheses),
        root_causes=tuple(root_causes),
        language=str(composer_input.get("language", "zh")),
        forbidden=tuple(forbidden),
        question=facts[0],
    )


def grounded_input(composer_input: JSON, answer_material: AnswerMaterial) -> JSON:
    """The Composer's input with only the missing-info items and actions whose every fact the
    material holds: an Executor's unchecked free text never reaches the answer through them."""
    missing = [
        item
        for item in composer_input.get("missing_info") or []
        if isinstance(item, str) and answer_check.check_text(item, answer_material).ok
    ]
    actions = [
        action
        for action in composer_input.get("recommended_actions") or []
        if isinstance(action, dict)
        and all(
            answer_check.check_text(str(action.get(key, "")), answer_material).ok
            for key in ("action_text", "reason")
        )
    ]
    return {**composer_input, "missing_info": missing, "recommended_actions": actions}


@dataclass
class AnswerCheckRecord:
    """The attempts the check refused, and which attempt became the answer."""

    rejections: list[JSON] = field(default_factory=list)
    answer_source: str = COMPOSER
    # who wrote the slot sentences (server.pipeline.compose_slots.SlotAccount), when the model rewrote
    slots: JSON | None = None

    def reject(
        self, attempt: int, output: JSON, result: answer_check.AnswerCheckResult | SentenceCheckResult
    ) -> None:
        self.rejections.append(
            {"attempt": attempt, "composer_output": output, "violations": result.to_seed()}
        )

    def to_seed(self) -> JSON:
        seed: JSON = {"answer_source": self.answer_source, "rejections": self.rejections}
        if self.slots is not None:
            seed["slots"] = self.slots
        return seed

    def rules(self) -> list[str]:
        """The rule ids of every rejection, once per attempt."""
        return [
            rule
            for rejection in self.rejections
            for rule in dict.fromkeys(str(v["rule_id"]) for v in rejection["violations"])
        ]


def strip_unsupported(output: JSON, answer_material: AnswerMaterial, fallback_text: str) -> JSON:
    """Last resort, never expected to be needed: the output without any line that fails the check."""
    lines = [
        line
        for line in str(output.get("user_facing_answer", "")).splitlines()
        if answer_check.check_text(line, answer_material).ok
    ]
    answer = "\n".join(lines).strip() or fallback_text
    return {
        "answer_summary": answer.splitlines()[0],
        "recommended_actions": [],
        "user_facing_answer": answer,
    }


__all__ = [
    "COMPOSED_BY_CODE",
    "COMPOSER",
    "COMPOSER_AND_CODE",
    "OFFLINE_FALLBACK",
    "AnswerCheckRecord",
    "grounded_input",
    "material_for",
    "strip_unsupported",
]
