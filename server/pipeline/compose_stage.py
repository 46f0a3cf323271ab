"""The Composer stage: compose, guard, check; retry once naming the violations; else compose by
code from the allowed material. Whatever is returned has passed the answer check.

The Composer that writes by code comes with the agent backend (`AgentBackend.fallback_composer`);
a backend whose own Composer writes by code has none, and is neither asked again nor noted as
having fallen back: it would write the same again."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules import answer_check
from evigate.rules.answer_check import AnswerMaterial
from evigate.server.agents.base import OFFLINE_FALLBACK as OFFLINE_FALLBACK_NOTE
from evigate.server.agents.base import Composer, StageNote, StageOutput, UnusableOutputError
from evigate.server.deadline import Deadline
from evigate.server.pipeline import answer_guard
from evigate.server.pipeline.answer_check_stage import (
    COMPOSED_BY_CODE,
    COMPOSER_RETRY,
    OFFLINE_FALLBACK,
    AnswerCheckRecord,
    retry_input,
    strip_unsupported,
)

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


async def compose_answer(  # noqa: PLR0917 - one argument per input of the stage
    composer: Composer,
    composer_input: JSON,
    answer_material: AnswerMaterial,
    negative_claims: Sequence[JSON],
    deadline: Deadline,
    stage_of: StageOf,
    *,
    fallback: Composer | None,
) -> ComposedAnswer:
    by_code = fallback or composer
    language = "en" if composer_input.get("language") == "en" else "zh"
    record = AnswerCheckRecord()
    findings: list[JSON] = []
    lowered = False

    def guarded_and_checked(output: JSON) -> tuple[JSON, answer_check.AnswerCheckResult]:
        nonlocal lowered
        with stage_of("guard"):
            guarded = answer_guard.apply(output, negative_claims, language)
        findings.extend(guarded.findings)
        lowered = lowered or guarded.lower_verdict
        with stage_of("answer_check"):
            return guarded.composer_output, answer_check.check(guarded.composer_output, answer_material)

    notes: list[StageNote] = []
    if not _has_allowed_claim(composer_input):
        # nothing is left to write: what was checked and what is missing, by code, no model call
        record.answer_source = COMPOSED_BY_CODE
        with stage_of("composer"):
            written = (await by_code.compose(composer_input, deadline)).data
        checked = _checked_by_code(written, guarded_and_checked, answer_material, record, language)
        return ComposedAnswer(checked, findings, lowered, record, None)

    version: str | None = None
    try:
        with stage_of("composer"):
            composed = await composer.compose(composer_input, deadline)
            notes.extend(composed.notes)
    except UnusableOutputError as error:  # e.g. an empty answer: refused like any bad output
        output, result = _unusable(error)
    else:
        version = composed.prompt_version
        output, result = guarded_and_checked(composed.data)
        if result.ok:
            return ComposedAnswer(output, findings, lowered, record, version, tuple(notes))
    record.reject(1, output, result)

    if fallback is not None:
        again = await _ask_again(
            composer, retry_input(composer_input, output, result), deadline, stage_of, record
        )
        if again is not None:
            version = again.prompt_version
            notes.extend(again.notes)
            output, result = guarded_and_checked(again.data)
            if result.ok:
                record.answer_source = COMPOSER_RETRY
                return ComposedAnswer(output, findings, lowered, record, version, tuple(notes))
            record.reject(2, output, result)

    record.answer_source = OFFLINE_FALLBACK
    if fallback is not None:
        rules = ", ".join(dict.fromkeys(record.rules())) or "unusable output"
        notes.append(
            StageNote(OFFLINE_FALLBACK_NOTE, f"unusable_output: the answer check refused it ({rules})")
        )
    with stage_of("composer_fallback"):
        written = (await by_code.compose(composer_input, deadline)).data
    output = _checked_by_code(written, guarded_and_checked, answer_material, record, language)
    return ComposedAnswer(output, findings, lowered, record, version, tuple(notes))


async def _ask_again(
    composer: Composer, retry: JSON, deadline: Deadline, stage_of: StageOf, record: AnswerCheckRecord
) -> StageOutput | None:
    """The retry's reply, or None: a retry that fails in any way (endpoint down, bad reply) leaves
    the fallback, and an unusable (e.g. empty) reply is recorded as refused like the first."""
    with contextlib.suppress(Exception):
        try:
            with stage_of("composer"):
                return await composer.compose(retry, deadline)
        except UnusableOutputError as error:
            record.reject(2, *_unusable(error))
    return None


def _unusable(error: UnusableOutputError) -> tuple[JSON, answer_check.AnswerCheckResult]:
    """An output the Composer's parser could not use (empty answer), as a refused empty answer."""
    output: JSON = {"answer_summary": "", "recommended_actions": [], "user_facing_answer": ""}
    violation = answer_check.Violation(answer_check.EMPTY, "user_facing_answer", "", str(error))
    return output, answer_check.AnswerCheckResult((violation,))


def _checked_by_code(
    output: JSON,
    guarded_and_checked: Callable[[JSON], tuple[JSON, answer_check.AnswerCheckResult]],
    answer_material: AnswerMaterial,
    record: AnswerCheckRecord,
    language: str,
) -> JSON:
    """An answer composed by code, guarded and checked (recorded in the guard's and the check's
    records through `guarded_and_checked`)."""
    checked, result = guarded_and_checked(output)
    if not result.ok:  # the offline composer passes by construction; never show unchecked text
        record.reject(len(record.rejections) + 1, checked, result)
        checked = strip_unsupported(checked, answer_material, _NOTHING[language])
    return checked


def _has_allowed_claim(composer_input: JSON) -> bool:
    return any(
        isinstance(c, dict) and c.get("claim_text") for c in composer_input.get("allowed_claims") or []
    )
