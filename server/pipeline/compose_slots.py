"""A model's slot texts laid into code's draft, each kept only if it passes on its own.

Code's draft (the offline Composer's sentences) is the answer's frame: its order, its fixed lines,
every sentence's kind and ids. A slot is a draft sentence that states facts; the model's text for a
slot takes the draft sentence's place when it passes the sentence check against the slot's own ids
(rules.sentence_check), repeats nothing of the Composer's prompt, carries the slot's facts and is in
the answer's language (rules.slot_check). A refused text is replaced by code's draft for that slot,
its rules recorded; a text that is the draft itself is code's sentence, not the model's. A slot
the model was not offered (server.agents.llm.composer.offered) is code's sentence, not a refusal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules import answer_check, sentence_check, slot_check
from evigate.rules.sentence_types import Sentence, SentenceMaterial

JSON = dict[str, Any]
MODEL = "model"  # passed and differs from the draft
COPIED = "copied"  # passed, and is the draft: code's
REFUSED = "refused"  # code's draft stands


@dataclass
class SlotAccount:
    """Who wrote each slot sentence of one answer, and why a refused one was refused."""

    slots: int = 0
    offered: int = 0  # the slots the model was asked to rewrite
    model: int = 0
    copied: int = 0
    refused: list[JSON] = field(default_factory=list)  # {slot, text, rules}

    @property
    def code(self) -> int:
        return self.slots - self.model

    def to_seed(self) -> JSON:
        return {
            "slots": self.slots,
            "offered_slots": self.offered,
            "model_sentences": self.model,
            "code_sentences": self.code,
            "copied_sentences": self.copied,
            "refused_slots": self.refused,
        }

    def summary(self) -> str:
        """One line for the trace's stage notes."""
        refused = "; ".join(f"slot {r['slot']} ({', '.join(r['rules'])})" for r in self.refused)
        line = f"the model wrote {self.model} of {self.slots} slot sentences, code {self.code}"
        line += f" ({self.slots - self.offered} not offered)" if self.offered < self.slots else ""
        line += f" ({self.copied} copied from code's draft)" if self.copied else ""
        return line + (f"; refused: {refused}" if refused else "")


def assemble(
    draft: Sequence[Sentence],
    texts: Sequence[str],
    material: SentenceMaterial,
    forbidden: Sequence[str],
    offered: Sequence[int] | None = None,
) -> tuple[list[Sentence], SlotAccount]:
    """The draft with each slot's text where it passes, and the account of who wrote which.
    `offered` are the numbers (from 0) of the slots the model was asked for; None is every one."""
    places = slot_check.slots_of(draft)
    asked = set(range(len(places)) if offered is None else offered)
    account = SlotAccount(slots=len(places), offered=len(asked & set(range(len(places)))))
    tried = list(draft)
    for number, place in enumerate(places):
        text = texts[number].strip() if number < len(texts) else ""
        if text:
            tried[place] = dataclasses.replace(draft[place], text=text)
    result = sentence_check.check(tried, material)
    language = material.language
    out = list(draft)
    for number, place in enumerate(places):
        if number not in asked:
            continue  # code's draft, by design
        text = tried[place].text if tried[place] is not draft[place] else ""
        rules = [v.rule_id for v in result.sentences[place]] if text else []
        rules += [rule for rule, _ in slot_check.violations(text, draft[place].text, language)]
        rules += [answer_check.PROMPT_ECHO] * bool(text and answer_check.prompt_echoes(text, forbidden))
        if rules:
            account.refused.append({"slot": number + 1, "text": text, "rules": list(dict.fromkeys(rules))})
        elif slot_check.same_as_draft(text, draft[place].text):
            account.copied += 1
        else:
            out[place] = tried[place]
            account.model += 1
    return out, account
