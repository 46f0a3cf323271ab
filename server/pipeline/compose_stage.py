"""The Composer stage: compose, guard, check; retry once naming the violations; else compose by
code from the allowed material. Whatever is returned has passed the answer check."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evigate.rules import answer_check
from evigate.rules.answer_check import AnswerMaterial
from evigate.server.agents.base import Composer, UnusableOutputError
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.deadline import Deadline
from evigate.server.pipeline import answer_guard
from evigate.server.pipeline.answer_check import (
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


async def compose_answer(  # noqa: PLR0917 - one argument per input of the stage
    composer: Composer,
    composer_input: JSON,
    answer_material: AnswerMaterial,
    negative_claims: Sequence[JSON],
    deadline: Deadline,
    stage_of: StageOf,
) -> ComposedAnswer:
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

    version: str | None = None
    try:
        with stage_of("composer"):
            composed = await composer.compose(composer_input, deadline)
    except UnusableOutputError as error:  # e.g. an empty answer: refused like any bad output
        output: JSON = {"answer_summary": "", "recommended_actions": [], "user_facing_answer": ""}
        result = answer_check.AnswerCheckResult(
            (answer_check.Violation(answer_check.EMPTY, "user_facing_answer", "", str(error)),)
        )
    else:
        version = composed.prompt_version
        output, result = guarded_and_checked(composed.data)
        if result.ok:
            return ComposedAnswer(output, findings, lowered, record, version)
    record.reject(1, output, result)

    if not isinstance(composer, OfflineComposer):  # the offline composer would write the same again
        retried: JSON | None = None
        # a retry that fails in any way (endpoint down, bad reply) leaves the fallback
        with contextlib.suppress(Exception), stage_of("composer"):
            again = await composer.compose(retry_input(composer_input, output, result), deadline)
            retried, version = again.data, again.prompt_version
        if retried is not None:
            output, result = guarded_and_checked(retried)
            if result.ok:
                record.answer_source = COMPOSER_RETRY
                return ComposedAnswer(output, findings, lowered, record, version)
            record.reject(2, output, result)

    record.answer_source = OFFLINE_FALLBACK
    with stage_of("composer_fallback"):
        fallback = (await OfflineComposer().compose(composer_input, deadline)).data
    output, result = guarded_and_checked(fallback)
    if not result.ok:  # the offline composer passes by construction; never show unchecked text
        record.reject(len(record.rejections) + 1, output, result)
        output = strip_unsupported(output, answer_material, _NOTHING[language])
    return ComposedAnswer(output, findings, lowered, record, version)
