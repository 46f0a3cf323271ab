"""The Composer stage: compose, guard, check; else compose by code from the allowed material.
Whatever is returned has passed the answer check.

An answer with sentences (every offline answer, and every model's) is checked sentence by sentence
against each sentence's own claims (rules.sentence_check). An answer of plain text only is held to
the token check (rules.answer_check) alone.

A Composer that rewrites code's draft slot by slot (`SlotComposer`: the LLM Composer) is asked
once: code drafts the answer (the backend's `fallback_composer`), the model gives one text per
slot, each is kept or replaced by code's draft for that slot (server.pipeline.compose_slots), and
the joined answer is checked as a whole; if that fails, code's draft is the answer. The answer check
record says how many slot sentences the model wrote and why each refused one was refused.

The Composer that writes by code comes with the agent backend (`AgentBackend.fallback_composer`);
a backend whose own Composer writes by code has none, and is neither asked again nor noted as
having fallen back: it would write the same again. A Composer that writes sentences from the
sentence check's material (`SentenceComposer`) is given it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules import answer_check, answer_text, sentence_check, slot_check
from evigate.rules.answer_check import AnswerMaterial
from evigate.rules.enums import ClaimType
from evigate.rules.sentence_types import Sentence, SentenceCheckResult, SentenceMaterial, SentenceViolation
from evigate.server.agents.base import (
    BY_CODE,
    COMPOSER_SLOTS,
    Composer,
    SentenceComposer,
    SlotComposer,
    StageNote,
    StageOutput,
    UnusableOutputError,
)
from evigate.server.agents.base import OFFLINE_FALLBACK as OFFLINE_FALLBACK_NOTE
from evigate.server.deadline import Deadline
from evigate.server.pipeline import answer_guard
from evigate.server.pipeline.answer_check_stage import (
    COMPOSED_BY_CODE,
    COMPOSER,
    COMPOSER_AND_CODE,
    OFFLINE_FALLBACK,
    AnswerCheckRecord,
    strip_unsupported,
)
from evigate.server.pipeline.compose_slots import SlotAccount, assemble

JSON = dict[str, Any]
StageOf = Callable[[str], contextlib.AbstractContextManager[None]]
_NOTHING = {
    "zh": "本次没有可以确认的结论。",
    "en": "Nothing could be confirmed this time.",
}


@dataclass(frozen=True)
class ComposedAnswer:
    composer_output: JSON  # checked
    guard_findings: list[JSON]
    lower_verdict: bool  # an over-statement survived the guard's rewrite
    check: AnswerCheckRecord
    prompt_version: str | None
    notes: tuple[StageNote, ...] = ()  # what the Composer's replies needed (fallbacks, parsing)


CheckResult = answer_check.AnswerCheckResult | SentenceCheckResult


async def compose_answer(  # noqa: PLR0917, PLR0915 - one argument per input, one sequence of attempts
    composer: Composer,
    composer_input: JSON,
    answer_material: AnswerMaterial,
    negative_claims: Sequence[JSON],
    deadline: Deadline,
    stage_of: StageOf,
    sentence_material: SentenceMaterial | None = None,
    *,
    fallback: Composer | None,
) -> ComposedAnswer:
    by_code = fallback or composer
    language = "en" if composer_input.get("language") == "en" else "zh"
    record = AnswerCheckRecord()
    claim_ids = [c.claim_id for c in sentence_material.claims] if sentence_material is not None else []
    findings: list[JSON] = []
    lowered = False

    def guarded_and_checked(output: JSON) -> tuple[JSON, CheckResult]:
        nonlocal lowered
        with stage_of("guard"):
            guarded = answer_guard.apply(output, negative_claims, language)
        findings.extend(guarded.findings)
        lowered = lowered or guarded.lower_verdict
        checked = {**guarded.composer_output, "language": language}
        with stage_of("answer_check"):
            sentences = answer_text.sentences_of(checked)
            if sentences and sentence_material is not None:
                result = _with_echoes(
                    sentence_check.check(sentences, sentence_material), sentences, answer_material.forbidden
                )
                # the text shown is the checked sentences joined, whatever text came with them
                actions = checked.get("recommended_actions") or []
                checked.update(answer_text.output(sentences, claim_ids, language, actions))
                checked["sentences"] = result.annotated(sentences)
                return checked, result
            return checked, answer_check.check(checked, answer_material)

    async def write(writer: Composer, given: JSON) -> StageOutput:
        if isinstance(writer, SentenceComposer):
            return await writer.compose_from(given, deadline, sentence_material)
        return await writer.compose(given, deadline)

    notes: list[StageNote] = []
    # a Composer that writes by code (no fallback) writes absences as its own answer
    why = nothing_to_write(composer_input, absences=fallback is not None)
    if why is not None:
        # every sentence has one wording the contract fixes: code writes them, no model call
        record.answer_source = COMPOSED_BY_CODE
        with stage_of("composer"):
            written = (await write(by_code, composer_input)).data
        checked = _checked_by_code(
            written, guarded_and_checked, answer_material, record, language, claim_ids=claim_ids
        )
        handed = (StageNote(BY_CODE, why),) if fallback is not None else ()
        return ComposedAnswer(checked, findings, lowered, record, None, handed)

    if isinstance(composer, SlotComposer) and fallback is not None and sentence_material is not None:
        with stage_of("composer"):
            draft = (await write(fallback, composer_input)).data
        slotted = await _slots(composer, composer_input, draft, sentence_material, deadline, stage_of)
        notes.extend(slotted.notes)
        texts = slotted.data.get("texts") or []
        drafted = answer_text.sentences_of(draft)
        if texts:
            sentences, account = assemble(
                drafted, texts, sentence_material, answer_material.forbidden, slotted.data.get("offered")
            )
            record.slots = account.to_seed()
            if account.model:
                actions = draft.get("recommended_actions") or []
                output, result = guarded_and_checked(
                    answer_text.output(sentences, claim_ids, language, actions)
                )
                if result.ok:
                    record.answer_source = COMPOSER if account.code == 0 else COMPOSER_AND_CODE
                    notes.append(StageNote(COMPOSER_SLOTS, account.summary()))
                    return ComposedAnswer(
                        output, findings, lowered, record, slotted.prompt_version, tuple(notes)
                    )
                record.reject(1, output, result)
            why = "the answer check refused the joined answer" if account.model else account.summary()
            notes.append(StageNote(OFFLINE_FALLBACK_NOTE, f"unusable_output: {why}"))
        else:  # no usable reply (or nothing offered to rewrite): every slot sentence is code's
            places = slot_check.slots_of(drafted)
            record.slots = SlotAccount(slots=len(places)).to_seed() if places else None
            if places and not any(n.kind in {OFFLINE_FALLBACK_NOTE, BY_CODE} for n in notes):
                notes.append(StageNote(OFFLINE_FALLBACK_NOTE, "unusable_output: the reply gave no slot text"))
        by_code_alone = not any(n.kind == OFFLINE_FALLBACK_NOTE for n in notes)
        record.answer_source = OFFLINE_FALLBACK if record.slots and not by_code_alone else COMPOSED_BY_CODE
        output = _checked_by_code(
            draft, guarded_and_checked, answer_material, record, language, claim_ids=claim_ids
        )
        return ComposedAnswer(output, findings, lowered, record, slotted.prompt_version, tuple(notes))

    version: str | None = None
    try:
        with stage_of("composer"):
            composed = await write(composer, composer_input)
            notes.extend(composed.notes)
    except UnusableOutputError as error:  # e.g. an empty answer: refused like any bad output
        output, result = _unusable(error)
    else:
        version = composed.prompt_version
        output, result = guarded_and_checked(composed.data)
        if result.ok:
            return ComposedAnswer(output, findings, lowered, record, version, tuple(notes))
    record.reject(1, output, result)

    record.answer_source = OFFLINE_FALLBACK
    if fallback is not None:
        rules = ", ".join(dict.fromkeys(record.rules())) or "unusable output"
        notes.append(
            StageNote(OFFLINE_FALLBACK_NOTE, f"unusable_output: the answer check refused it ({rules})")
        )
    with stage_of("composer_fallback"):
        written = (await write(by_code, composer_input)).data
    output = _checked_by_code(
        written, guarded_and_checked, answer_material, record, language, claim_ids=claim_ids
    )
    return ComposedAnswer(output, findings, lowered, record, version, tuple(notes))


async def _slots(  # noqa: PLR0917 - the Composer, its input, the draft and what checks it
    composer: SlotComposer,
    composer_input: JSON,
    draft: JSON,
    material: SentenceMaterial,
    deadline: Deadline,
    stage_of: StageOf,
) -> StageOutput:
    """The model's one reply of slot texts; an unusable reply (no slot text, not JSON) is none,
    with the fallback noted. Endpoint errors are the Composer's to note (server.agents.mix)."""
    draft_sentences = answer_text.sentences_of(draft)
    slots = [draft_sentences[i] for i in slot_check.slots_of(draft_sentences)]
    if not slots:
        return StageOutput({"texts": []}, None, (StageNote(BY_CODE, "the draft has no sentence to rewrite"),))
    try:
        with stage_of("composer"):
            return await composer.rewrite(composer_input, slots, material, deadline)
    except UnusableOutputError as error:
        note = StageNote(
            OFFLINE_FALLBACK_NOTE, f"unusable_output: {type(error).__name__}: {str(error)[:300]}"
        )
        return StageOutput({"texts": []}, None, (note,))


def _with_echoes(
    result: SentenceCheckResult, sentences: Sequence[Sentence], forbidden: Sequence[str]
) -> SentenceCheckResult:
    """The check's result with each sentence's repeats of the Composer's prompt (a model copying
    its instructions or placeholders), which the sentence check does not know."""
    rule, meaning = answer_check.PROMPT_ECHO, answer_check.RULES[answer_check.PROMPT_ECHO]
    per_sentence = tuple(
        (
            *found,
            *(
                SentenceViolation(rule, i, phrase, meaning)
                for phrase in answer_check.prompt_echoes(s.text, forbidden)
            ),
        )
        for i, (s, found) in enumerate(zip(sentences, result.sentences, strict=True))
    )
    return SentenceCheckResult(per_sentence, result.answer)


def _unusable(error: UnusableOutputError) -> tuple[JSON, CheckResult]:
    """An output the Composer's parser could not use (empty answer), as a refused empty answer."""
    output: JSON = {"answer_summary": "", "recommended_actions": [], "user_facing_answer": ""}
    violation = answer_check.Violation(answer_check.EMPTY, "user_facing_answer", "", str(error))
    return output, answer_check.AnswerCheckResult((violation,))


def _checked_by_code(
    output: JSON,
    guarded_and_checked: Callable[[JSON], tuple[JSON, CheckResult]],
    answer_material: AnswerMaterial,
    record: AnswerCheckRecord,
    language: str,
    *,
    claim_ids: Sequence[str] = (),
) -> JSON:
    """An answer composed by code, guarded and checked (recorded in the guard's and the check's
    records through `guarded_and_checked`)."""
    checked, result = guarded_and_checked(output)
    if not result.ok:  # the offline composer passes by construction; never show unchecked text
        record.reject(len(record.rejections) + 1, checked, result)
        if isinstance(result, SentenceCheckResult) and not result.answer:
            return _without_refused(checked, result, claim_ids)
        checked = strip_unsupported(checked, answer_material, _NOTHING[language])
    return checked


def _without_refused(output: JSON, result: SentenceCheckResult, claim_ids: Sequence[str]) -> JSON:
    """A structured answer without the sentences the check refused."""
    kept = [
        s
        for s, refused in zip(answer_text.sentences_of(output), result.sentences, strict=True)
        if not refused
    ]
    rebuilt = answer_text.output(kept, claim_ids, str(output.get("language", "zh")))
    return {**output, **rebuilt, "sentences": [{**s.to_seed(), "violations": []} for s in kept]}


def nothing_to_write(composer_input: JSON, *, absences: bool = True) -> str | None:
    """Why a Composer model could add nothing to the answer code writes, or None. With no allowed
    claim, the answer is what was checked and what is missing; when every allowed claim says a
    query found nothing and no hypothesis is allowed (asked only with `absences`), each sentence
    is an absence, whose one wording the contract fixes ("this query found no matching evidence
    for …"). Code writes those sentences as the contract words them; a model could only repeat
    them or break them."""
    claims = [
        c for c in composer_input.get("allowed_claims") or [] if isinstance(c, dict) and c.get("claim_text")
    ]
    if not claims:
        return "no claim was allowed: code writes what was checked and what is missing"
    if (
        not absences
        or composer_input.get("allowed_hypotheses")
        or any(c.get("claim_type") != ClaimType.NEGATIVE_OBSERVATION for c in claims)
    ):
        return None
    return (
        "every allowed claim says a query found nothing and no hypothesis is allowed: each sentence "
        "has the one wording the contract fixes, which code writes"
    )
