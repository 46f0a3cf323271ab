"""The LLM Composer: the model rewrites code's draft answer, one slot at a time.

Code drafts the whole answer first (the offline Composer's sentences, which pass the sentence check
by construction). Each draft sentence that states facts is a slot; the fixed lines and headers stay
code's and are not sent. The model is given, per slot, its number, its kind and code's draft text,
and replies with one text per slot. It never binds ids: each text keeps its slot's kind and ids, and
server.pipeline.compose_slots checks it against them, keeping code's draft for a slot it refuses.
One request per session, and a short one: a small model on a CPU reads every token and keeps
fewer values than a long draft sentence holds, so the model is offered only the first few slots
whose drafts hold few enough names and values (`offered`); the others stay code's, counted as code's
sentences, not as refusals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules import slot_check
from evigate.rules.sentence_types import Sentence, SentenceMaterial
from evigate.server.agents.base import BY_CODE, JSON, StageNote, StageOutput
from evigate.server.agents.llm.budget import stage_messages
from evigate.server.agents.llm.client import LLMClient, LLMOutputError
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.deadline import Deadline

# what one request offers: a small model's reply and its prompt stay short
MAX_SLOTS = 4
MAX_KEY_TERMS = 10  # a draft holding more names and values than this stays code's
MAX_DRAFT_CHARS = 1200  # the offered drafts together
# kinds with one wording, which code writes: no rewrite makes them read better
_FIXED_WORDING = frozenset({"absence", "could_not_check"})
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|\'[^\']*\'')
COMPOSER_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "sentences": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"slot": {"type": "integer"}, "text": {"type": "string"}},
                "required": ["slot", "text"],
            },
        }
    },
    "required": ["sentences"],
}
# Said last, in the answer's own language: a small model otherwise follows the prompt's language.
ANSWER_IN_EN = "Write every text in English only, keeping the facts' values and names as written."
ANSWER_IN_ZH = "每个 text 只用中文书写，保留事实中的数值与名称。"


class LLMComposer:
    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        return await self.compose_from(composer_input, deadline, None)

    async def compose_from(
        self, composer_input: JSON, deadline: Deadline, material: SentenceMaterial | None
    ) -> StageOutput:
        """Code's draft: what the answer is when the model is not asked (the slots are `rewrite`'s)."""
        return await OfflineComposer().compose_from(composer_input, deadline, material)

    async def rewrite(
        self,
        composer_input: JSON,
        slots: Sequence[Sentence],
        material: SentenceMaterial,
        deadline: Deadline,
    ) -> StageOutput:
        """The model's text for each slot offered (`{"texts": [...], "offered": [...]}`: one text per
        slot, "" where it gave none or the slot was not offered; the offered slots' places). With no
        slot to offer, no request: code's draft, noted `by_code`. Raises LLMOutputError when the
        reply holds no slot text at all."""
        chosen = offered(slots)
        if not chosen:
            why = "no draft sentence a rewrite can change (fixed wordings, quoted lines, many values)"
            note = StageNote(BY_CODE, why)
            return StageOutput({"texts": [], "offered": []}, None, (note,))
        prompt = load_prompt("composer")
        language = "en" if composer_input.get("language") == "en" else "zh"
        query = str(composer_input.get("original_query", ""))
        messages = [  # the session's shared first messages, then the prompt and the slots
            *stage_messages(prompt.text, query, payload([slots[i] for i in chosen], language)),
            {"role": "user", "content": ANSWER_IN_EN if language == "en" else ANSWER_IN_ZH},
        ]
        data, reply = await self._client.chat_json(
            "composer", messages, deadline, schema_name="composer_slots", schema=COMPOSER_SCHEMA
        )
        texts = [""] * len(slots)
        for place, text in zip(chosen, reply_texts(data, len(chosen)), strict=True):
            texts[place] = text
        notes = tuple(StageNote(note) for note in reply.notes)
        return StageOutput({"texts": texts, "offered": chosen}, prompt.version, notes)


def offered(slots: Sequence[Sentence]) -> list[int]:
    """The places of the slots the model is asked to rewrite: in the draft's order, those a rewrite
    can make read better (not an absence or a failed check, whose wording is fixed, nor a draft
    that is mostly a quoted line, which must stay as it was logged) and whose draft holds at most
    MAX_KEY_TERMS names and values; at most MAX_SLOTS of them and MAX_DRAFT_CHARS of drafts
    together (the first of them whatever its length)."""
    chosen: list[int] = []
    chars = 0
    for place, sentence in enumerate(slots):
        if sentence.kind in _FIXED_WORDING or _mostly_quoted(sentence.text):
            continue
        if len(slot_check.key_terms(sentence.text)) > MAX_KEY_TERMS:
            continue
        if chosen and chars + len(sentence.text) > MAX_DRAFT_CHARS:
            break
        chosen.append(place)
        chars += len(sentence.text)
        if len(chosen) == MAX_SLOTS:
            break
    return chosen


def _mostly_quoted(text: str) -> bool:
    return 2 * sum(len(m.group()) for m in _QUOTED.finditer(text)) > len(text)


def payload(slots: Sequence[Sentence], language: str) -> JSON:
    """What the model is given: per slot its number, kind and code's draft. Not the claims or their
    excerpts: the draft already holds every value the slot may state, and the sentence check holds
    the text to the slot's claims whatever the model was shown."""
    return {
        "language": language,
        "slots": [
            {"slot": number, "kind": s.kind, "draft": s.text} for number, s in enumerate(slots, start=1)
        ],
    }


def reply_texts(data: Mapping[str, Any], count: int) -> list[str]:
    """One text per slot: `{"sentences": [{"slot": n, "text": ...}]}`, an item without a slot number
    taken by its place; `{"texts": [...]}` too. Raises LLMOutputError when no slot has a text."""
    raw = data.get("sentences")
    if not isinstance(raw, list):
        raw = data.get("texts")
    texts = [""] * count
    for place, item in enumerate(raw if isinstance(raw, list) else []):
        text = item if isinstance(item, str) else item.get("text") if isinstance(item, Mapping) else None
        number = item.get("slot") if isinstance(item, Mapping) else None
        index = number - 1 if isinstance(number, int) and not isinstance(number, bool) else place
        if isinstance(text, str) and 0 <= index < count and not texts[index]:
            texts[index] = text.strip()
    if not any(texts):
        raise LLMOutputError("composer: the reply holds no text for any slot")
    return texts


def echo_lines() -> Sequence[str]:
    """The instruction lines code adds to the prompt, which an answer must never repeat."""
    return (ANSWER_IN_EN, ANSWER_IN_ZH)
