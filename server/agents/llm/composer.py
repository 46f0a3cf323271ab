"""The LLM Composer: the model writes the answer as sentences, each naming the claims and
hypotheses it expresses; code renders them into the text the user reads (rules.answer_text).

The model sees each id it may bind: the allowed claims, the failed calls and missing items as
could-not-check claims (`call-<id>`, `missing-<n>`) and the hypotheses (`hypothesis-<n>`). It never
writes the joined text, the citation markers or the recommended actions: those are code's, so what
the sentence check passes is exactly what is shown. On a retry the model is told which of its
sentences were refused and by which rule (server.pipeline.compose_stage asks for the retry and
falls back to the offline Composer).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules import answer_text
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_types import FIXED_LINES, RULES, Sentence, SentenceMaterial
from evigate.server.agents.base import JSON, StageNote, StageOutput
from evigate.server.agents.llm.budget import stage_messages
from evigate.server.agents.llm.client import LLMClient, LLMOutputError
from evigate.server.agents.llm.prompt_loader import load_prompt
from evigate.server.agents.offline import composer as offline_composer
from evigate.server.agents.offline.answer_writer import claim_ids
from evigate.server.deadline import Deadline

_STR = {"type": "string"}
NO_EVIDENCE_PATH = "$.no_evidence"
_IDS = {"type": "array", "items": _STR}
KINDS = [kind.value for kind in SentenceKind]
COMPOSER_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "sentences": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": KINDS},
                    "text": _STR,
                    "claim_ids": _IDS,
                    "hypothesis_ids": _IDS,
                    "fixed_line": {"type": "string", "enum": ["", *FIXED_LINES]},
                },
                "required": ["kind", "text", "claim_ids", "hypothesis_ids"],
            },
        }
    },
    "required": ["sentences"],
}
# Said last, in the answer's own language: a small model otherwise follows the prompt's Chinese
# phrasings and answers an English question in Chinese.
ANSWER_IN_EN = "Write every sentence's text in English only, keeping the claims' values as written."
ANSWER_IN_ZH = "每个句子的 text 只用中文书写，保留各条结论中的数值与名称。"


class LLMComposer:
    def __init__(self, client: LLMClient) -> None:
        self._client = client

    async def compose(self, composer_input: JSON, deadline: Deadline) -> StageOutput:
        return await self.compose_from(composer_input, deadline, None)

    async def compose_from(
        self, composer_input: JSON, deadline: Deadline, material: SentenceMaterial | None
    ) -> StageOutput:
        """The answer written with `material` (the sentence check's: every id a sentence may be
        bound to); without it, from the Composer's input alone."""
        prompt = load_prompt("composer")
        language = "en" if composer_input.get("language") == "en" else "zh"
        if material is None:
            material = offline_composer.material_of(composer_input)
        query = str(composer_input.get("original_query", ""))
        messages = [  # the session's shared first messages, then the prompt and the input
            *stage_messages(prompt.text, query, payload(composer_input, material)),
            {"role": "user", "content": ANSWER_IN_EN if language == "en" else ANSWER_IN_ZH},
        ]
        data, reply = await self._client.chat_json(
            "composer", messages, deadline, schema_name="composer_output", schema=COMPOSER_SCHEMA
        )
        sentences = reply_sentences(data, language)
        actions = offline_composer.collection_actions(composer_input)
        output = answer_text.output(sentences, claim_ids(material), language, actions)
        return StageOutput(output, prompt.version, tuple(StageNote(note) for note in reply.notes))


def payload(composer_input: Mapping[str, Any], material: SentenceMaterial) -> JSON:
    """What the model is given: the Composer's input, every id a sentence may be bound to, and on a
    retry its refused sentences with their rules (instead of the whole refused output)."""
    data: JSON = {key: value for key, value in composer_input.items() if key != "answer_check"}
    claims = [c for c in composer_input.get("allowed_claims") or [] if isinstance(c, Mapping)]
    data["allowed_claims"] = [shown_claim(c) for c in claims]
    allowed = {c.get("claim_id") for c in claims}
    data["allowed_hypotheses"] = [
        {"hypothesis_id": h.hypothesis_id, "hypothesis_text": h.text} for h in material.hypotheses
    ]
    data["could_not_check"] = [
        {"claim_id": c.claim_id, "text": c.text}
        for c in material.claims
        if c.failed and c.claim_id not in allowed
    ]
    check = composer_input.get("answer_check")
    if isinstance(check, Mapping):
        data["answer_check"] = refusals(check)
    return data


def shown_claim(claim: Mapping[str, Any]) -> JSON:
    """A claim as the model sees it: its id, type, text and the excerpts of what its calls found.
    A call that found nothing has no excerpt worth reading (its claim text says what was not
    found; the binding holds the query's own diagnostics, often longer than all the findings) and
    the citation fields are code's: the model never writes them, and the sentence check reads the
    claims from the session, not from this listing."""
    shown: JSON = {key: value for key, value in claim.items() if key != "evidence_bindings"}
    shown["evidence_bindings"] = [
        {"tool_name": b.get("tool_name", ""), "evidence_excerpt": b.get("evidence_excerpt", "")}
        for b in claim.get("evidence_bindings") or []
        if isinstance(b, Mapping) and not str(b.get("raw_path", "")).startswith(NO_EVIDENCE_PATH)
    ]
    return shown


def refusals(check: Mapping[str, Any]) -> JSON:
    """The retry's account of a refused output: each refused sentence (its place, text and ids)
    with the rules it broke, the sentences that passed, and the rules the answer as a whole broke."""
    rejected = check.get("rejected_output")
    sentences = answer_text.sentences_of(rejected) if isinstance(rejected, Mapping) else []
    by_sentence: dict[int, list[JSON]] = {}
    whole: list[JSON] = []
    for violation in check.get("violations") or []:
        if not isinstance(violation, Mapping):
            continue
        told = {
            "rule_id": violation.get("rule_id", ""),
            "token": violation.get("token", ""),
            "meaning": RULES.get(str(violation.get("rule_id")), violation.get("message", "")),
        }
        index = _index(str(violation.get("field", "")))
        if index is None or index >= len(sentences):
            whole.append(told)
        else:
            by_sentence.setdefault(index, []).append(told)
    return {
        "refused_sentences": [
            {**_seed(sentences[i]), "index": i, "rules": rules} for i, rules in sorted(by_sentence.items())
        ],
        "kept_sentences": [_seed(s) for i, s in enumerate(sentences) if i not in by_sentence],
        "answer_violations": whole,
    }


def reply_sentences(data: JSON, language: str) -> list[Sentence]:
    """The model's sentences. A kind the contract lacks is left unset (the sentence check refuses
    it); a fixed line gets its fixed text. A reply of plain text only (`user_facing_answer`, the
    older shape) is read as its lines, bound to nothing, for the check to refuse and the retry to
    name. Raises LLMOutputError when there is no sentence at all."""
    raw = data.get("sentences")
    if not isinstance(raw, list):
        text = data.get("user_facing_answer")
        raw = [{"text": line} for line in text.splitlines() if line.strip()] if isinstance(text, str) else []
    sentences = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("kind")
        sentence = Sentence.from_seed({**item, "kind": kind if kind in KINDS else None})
        fixed = FIXED_LINES.get(sentence.fixed_line)
        if fixed is not None:
            sentence = Sentence(SentenceKind.NOTE, fixed[language], fixed_line=sentence.fixed_line)
        if sentence.text.strip() or sentence.fixed_line:
            sentences.append(Sentence(sentence.kind, sentence.text.strip(), *_ids(sentence)))
    if not sentences:
        raise LLMOutputError("composer: 'sentences' must hold at least one sentence with text")
    return sentences


def _ids(sentence: Sentence) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    return sentence.claim_ids, sentence.hypothesis_ids, sentence.fixed_line


def _seed(sentence: Sentence) -> JSON:
    seed = sentence.to_seed()
    return {key: seed[key] for key in ("kind", "text", "claim_ids", "hypothesis_ids")}


def _index(field: str) -> int | None:
    """3 for "sentences[3]"; None for a field of the answer as a whole."""
    if field.startswith("sentences[") and field.endswith("]"):
        number = field[len("sentences[") : -1]
        return int(number) if number.isdigit() else None
    return None


def echo_lines() -> Sequence[str]:
    """The instruction lines code adds to the prompt, which an answer must never repeat."""
    return (ANSWER_IN_EN, ANSWER_IN_ZH)
