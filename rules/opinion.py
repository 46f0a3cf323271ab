"""The LLM opinion beside the rule score, checked by code (docs/design.md §5.7).

An opinion is four yes/no items, each with a one-line reason. It never changes the evidence score:
each item becomes a factor with `source = "llm"` and delta 0. What code already knows wins over
it: `states_only_verified_facts = true` on an answer that the Gatekeeper, the Verifier's code
constraints or the answer check marked otherwise is recorded as a disagreement, not believed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules.enums import Verdict
from evigate.rules.errors import EvigateError

ITEMS = ("has_root_cause", "has_solution", "answers_the_question", "states_only_verified_facts")
VERIFIED_ONLY = "states_only_verified_facts"
MAX_REASON_CHARS = 300


class OpinionFormatError(EvigateError, ValueError):
    """The model's opinion is not four booleans with reasons."""


@dataclass(frozen=True)
class OpinionItem:
    name: str
    value: bool
    reason: str


@dataclass(frozen=True)
class Disagreement:
    item: str
    opinion: bool
    marks: tuple[str, ...]  # what code found, e.g. "gatekeeper severity=reject"

    def to_seed(self) -> dict[str, Any]:
        return {"item": self.item, "opinion": self.opinion, "believed": False, "code_marks": list(self.marks)}


def parse_items(data: Any) -> tuple[OpinionItem, ...]:
    """The four items of a reply: `{"has_root_cause": {"value": true, "reason": "…"}, …}`."""
    if not isinstance(data, Mapping):
        raise OpinionFormatError("the opinion is not a JSON object")
    items = []
    for name in ITEMS:
        entry = data.get(name)
        if not isinstance(entry, Mapping) or not isinstance(entry.get("value"), bool):
            raise OpinionFormatError(f"{name}: expected {{'value': true|false, 'reason': '…'}}")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise OpinionFormatError(f"{name}: the reason is missing")
        line = " ".join(reason.split())
        items.append(OpinionItem(name, entry["value"], line[:MAX_REASON_CHARS]))
    return tuple(items)


def code_marks(
    verifier_evaluation: Mapping[str, Any] | None,
    rounds: Sequence[Mapping[str, Any]] = (),
    answer_check: Mapping[str, Any] | None = None,
) -> tuple[str, ...]:
    """Why code says the answer may state more than what was verified; empty when nothing says so.

    From the final round's Gatekeeper result and verdict, every round's code-constraint override and
    the answer check's refused Composer texts."""
    marks: list[str] = []
    evaluation = verifier_evaluation or {}
    gatekeeper = evaluation.get("gatekeeper_result")
    if isinstance(gatekeeper, Mapping) and gatekeeper.get("severity") not in (None, "none"):
        marks.append(f"gatekeeper severity={gatekeeper.get('severity')}")
    verdict = evaluation.get("verdict")
    if verdict is not None and verdict != Verdict.PASS:
        marks.append(f"final verdict={verdict}")
    unsupported = [
        str(c.get("claim_id"))
        for c in evaluation.get("claim_checks") or []
        if isinstance(c, Mapping) and c.get("supported") is False
    ]
    if unsupported:
        marks.append(f"unsupported claims: {', '.join(unsupported)}")
    for number, round_ in enumerate(rounds, 1):
        reason = round_.get("verdict_override_reason")
        if reason:
            marks.append(f"round {round_.get('round', number)} verdict overridden by code: {reason}")
    rejections = (answer_check or {}).get("rejections") or []
    if rejections:
        marks.append(f"answer check refused {len(rejections)} composer output(s)")
    if (answer_check or {}).get("answer_source") == "offline_fallback":
        marks.append("answer composed by code after the answer check refused the composer")
    return tuple(marks)


def disagreements(items: Sequence[OpinionItem], marks: Sequence[str]) -> tuple[Disagreement, ...]:
    """A `true` for states_only_verified_facts that code contradicts."""
    return tuple(
        Disagreement(item.name, item.value, tuple(marks))
        for item in items
        if item.name == VERIFIED_ONLY and item.value and marks
    )


def factors(items: Sequence[OpinionItem], disagreed: Sequence[Disagreement] = ()) -> list[dict[str, Any]]:
    """One delta-0 factor per item: shown beside the rule factors, never added to the score."""
    contradicted = {d.item for d in disagreed}
    return [
        {
            "name": f"llm_{item.name}",
            "delta": 0,
            "description": ("yes: " if item.value else "no: ")
            + item.reason
            + (" (contradicted by code, not believed)" if item.name in contradicted else ""),
            "source": "llm",
        }
        for item in items
    ]


def opinion_seed(
    items: Sequence[OpinionItem], disagreed: Sequence[Disagreement], model: str, prompt_version: str
) -> dict[str, Any]:
    """self_evaluation.llm_opinion."""
    contradicted = {d.item for d in disagreed}
    return {
        **{
            item.name: {"value": item.value, "reason": item.reason, "believed": item.name not in contradicted}
            for item in items
        },
        "model": model,
        "prompt_version": prompt_version,
        "disagreements": [d.to_seed() for d in disagreed],
    }
