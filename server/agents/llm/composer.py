"""The LLM Composer: the model rewrites code's draft answer, one slot at a time.

Code drafts the whole answer first (the offline Composer's sentences, which pass the sentence check
by construction). Each draft sentence that states facts is a slot; the fixed lines and headers stay
code's and are not sent. The model is given, per slot, its number, its kind, the facts it may use
(its bound claims' text and excerpts, its hypotheses) and code's draft text, and replies with one
text per slot. It never binds ids: each text keeps its slot's kind and ids, and
server.pipeline.compose_slots checks it against them, keeping code's draft for a slot it refuses.
One request per session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules.sentence_types import Sentence, SentenceMaterial
from evigate.server.agents.base import JSON, StageNote, StageOutput
from evigate.server.agents.llm.budget import stage_messages
from evigate.server.agents.llm.client import LLMClient, LLMOutputError
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.deadline import Deadline

# a slot's facts stay compact: a small model reads every token
_EXCERPT_CHARS = 160
_EXCERPTS = 2  # per claim
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
        """The model's text for each slot (`{"texts": [...]}`, one per slot, "" where it gave none).
        Raises LLMOutputError when the reply holds no slot text at all."""
        prompt = load_prompt("composer")
        language = "en" if composer_input.get("language") == "en" else "zh"
        query = str(composer_input.get("original_query", ""))
        messages = [  # the session's shared first messages, then the prompt and the slots
            *stage_messages(prompt.text, query, payload(slots, material, language)),
            {"role": "user", "content": ANSWER_IN_EN if language == "en" else ANSWER_IN_ZH},
        ]
        data, reply = await self._client.chat_json(
            "composer", messages, deadline, schema_name="composer_slots", schema=COMPOSER_SCHEMA
        )
        texts = reply_texts(data, len(slots))
        return StageOutput({"texts": texts}, prompt.version, tuple(StageNote(note) for note in reply.notes))


def payload(slots: Sequence[Sentence], material: SentenceMaterial, language: str) -> JSON:
    """What the model is given: per slot its number, kind, facts and code's draft. A slot's facts
    are its claims' texts and hypotheses, and the first few excerpts of its claims, each excerpt
    shown once (at the first slot bound to it): the draft already holds the values it states, and
    a small model reads every token."""
    shown: set[str] = set()
    return {
        "language": language,
        "slots": [_slot(i, s, material, shown) for i, s in enumerate(slots, start=1)],
    }


def _slot(number: int, sentence: Sentence, material: SentenceMaterial, shown: set[str]) -> JSON:
    facts: list[str] = []
    for claim_id in sentence.claim_ids:
        claim = material.claims_by_id.get(claim_id)
        if claim is None:
            continue
        facts.append(claim.text)
        excerpts = [e.text[:_EXCERPT_CHARS] for e in claim.excerpts if e.text and e.text != claim.text]
        for excerpt in excerpts[:_EXCERPTS]:
            if excerpt not in shown:
                shown.add(excerpt)
                facts.append(excerpt)
    for hypothesis_id in sentence.hypothesis_ids:
        hypothesis = material.hypotheses_by_id.get(hypothesis_id)
        if hypothesis is not None:
            facts.append(hypothesis.text)
    return {
        "slot": number,
        "kind": sentence.kind,
        "facts": list(dict.fromkeys(facts)),
        "draft": sentence.text,
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
