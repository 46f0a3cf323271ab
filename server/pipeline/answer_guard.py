"""The answer guard after the Composer (docs/design.md §5.3): over-statements of negative evidence in any text
the user sees are rewritten into the safe phrasing; if the rewritten text still over-states, the
verdict is lowered. Either way every finding is recorded with the action taken. A structured
answer's sentences are guarded one by one (its text is joined from them afterwards)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules import guard
from evigate.rules.enums import SentenceKind

JSON = dict[str, Any]
REWRITTEN = "rewritten"
VERDICT_LOWERED = "verdict_lowered"
_TEXT_FIELDS = ("user_facing_answer", "answer_summary")
_ACTION_FIELDS = ("action_text", "reason")


@dataclass(frozen=True)
class GuardOutcome:
    composer_output: JSON  # after rewriting
    findings: list[JSON]  # every finding, with "field" and "action"
    lower_verdict: bool  # an over-statement survived the rewrite


def apply(output: JSON, negative_claims: Sequence[JSON], language: str) -> GuardOutcome:
    guarded = dict(output)
    findings: list[JSON] = []
    residual = False

    def check(text: str, where: str) -> str:
        nonlocal residual
        found = guard.scan(text, negative_claims)
        if not found:
            return text
        rewritten = guard.rewrite(text, found, language)
        left = guard.scan(rewritten, negative_claims)
        action = VERDICT_LOWERED if left else REWRITTEN
        residual = residual or bool(left)
        findings.extend({**f.to_seed(), "field": where, "action": action} for f in found)
        return rewritten

    def check_sentence(sentence: JSON, index: int) -> JSON:
        before = len(findings)
        text = check(sentence["text"], f"sentences[{index}]")
        if text == sentence["text"]:
            return sentence
        # the safe phrasing speaks for the negative claim it names: a sentence that is nothing but
        # safe phrasings is an absence bound to those claims, so the sentence check passes it as
        # written; one that keeps words of its own keeps its kind and adds them
        rewritten = findings[before:]
        ids = [str(f["claim_id"]) for f in rewritten if f.get("claim_id")]
        if not ids:
            return {**sentence, "text": text}
        alone = "".join(str(f["safe_phrasing"]) for f in rewritten).split() == text.split()
        bound = ids if alone else [*_ids(sentence.get("claim_ids")), *ids]
        out = {**sentence, "text": text, "claim_ids": list(dict.fromkeys(bound))}
        if alone:
            out["kind"] = SentenceKind.ABSENCE
            out["hypothesis_ids"] = []
        return out

    sentences = guarded.get("sentences")
    if isinstance(sentences, list) and sentences:
        # a structured answer's text is joined from its sentences: they are what is guarded
        guarded["sentences"] = [
            check_sentence(sentence, index)
            if isinstance(sentence, dict) and isinstance(sentence.get("text"), str)
            else sentence
            for index, sentence in enumerate(sentences)
        ]
    else:
        for field in _TEXT_FIELDS:
            value = guarded.get(field)
            if isinstance(value, str):
                guarded[field] = check(value, field)
    actions = guarded.get("recommended_actions")
    if isinstance(actions, list):
        checked = []
        for index, item in enumerate(actions):
            action = dict(item) if isinstance(item, dict) else item
            if isinstance(action, dict):
                for field in _ACTION_FIELDS:
                    value = action.get(field)
                    if isinstance(value, str):
                        action[field] = check(value, f"recommended_actions[{index}].{field}")
            checked.append(action)
        guarded["recommended_actions"] = checked
    return GuardOutcome(guarded, findings, residual)


def _ids(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
