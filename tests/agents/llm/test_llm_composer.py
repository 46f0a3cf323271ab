"""The LLM Composer over the scripted OpenAI-compatible server: code drafts the answer, the model
rewrites its slots in one request, and each slot text is kept only if it passes on its own (else
code's draft for that slot); who wrote which sentence is recorded."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from evigate.rules import sentence_check, slot_check
from evigate.rules.sentence_types import ClaimFacts, Excerpt, HypothesisFacts, Sentence, SentenceMaterial
from evigate.server.agents.base import BY_CODE, COMPOSER_SLOTS, OFFLINE_FALLBACK
from evigate.server.agents.llm import LLMClient
from evigate.server.agents.llm import composer as llm_composer
from evigate.server.agents.llm.composer import LLMComposer
from evigate.server.agents.llm.prompt_loader import echo_phrases, load_prompt
from evigate.server.agents.mix import FallbackComposer
from evigate.server.agents.offline.composer import OfflineComposer
from evigate.server.deadline import Deadline
from evigate.server.pipeline.compose_stage import ComposedAnswer, compose_answer
from tests.agents.llm.conftest import ALERT
from tests.support.fake_openai import FakeOpenAI, Raw, Step, json_reply, reply

CLAIM = "payment-service has a firing HighCPUUsage alert; CPU usage is 92%."
HYPOTHESIS = "a traffic spike may explain the CPU load (unconfirmed)"
INPUT: dict[str, Any] = {
    "original_query": "Does payment-service have a HighCPUUsage alert?",
    "language": "en",
    "verdict": "PASS",
    "allowed_claims": [{"claim_id": "claim-1", "claim_type": "observation", "claim_text": CLAIM}],
    "allowed_hypotheses": [{"hypothesis_text": HYPOTHESIS}],
    "missing_info": [],
    "recommended_actions": [],
}
MATERIAL = SentenceMaterial(
    claims=(
        ClaimFacts("claim-1", "observation", CLAIM, (Excerpt(ALERT, ALERT, "query_metrics", "$.alerts[0]"),)),
    ),
    hypotheses=(HypothesisFacts("hypothesis-1", HYPOTHESIS),),
    question="Does payment-service have a HighCPUUsage alert?",
    language="en",
)
DRAFT_HEADLINE = (
    "Yes. The HighCPUUsage alert of payment-service is firing at 92% (for 25m, severity critical)."
)
HEADLINE = "payment-service has had the HighCPUUsage alert firing at 92% for 25m, severity critical."
HEDGED = "A traffic spike may explain the CPU load; this is unconfirmed."


@contextlib.contextmanager
def _stage(name: str) -> Iterator[None]:
    yield


async def _compose(client: LLMClient, material: SentenceMaterial = MATERIAL, **given: Any) -> ComposedAnswer:
    composer = FallbackComposer(LLMComposer(client), OfflineComposer())
    forbidden = (*echo_phrases(load_prompt("composer")),)
    answer_material = sentence_check.token_material(material)
    answer_material = type(answer_material)(**{**answer_material.__dict__, "forbidden": forbidden})
    return await compose_answer(
        composer,
        {**INPUT, **given},
        answer_material,
        [],
        Deadline.after(5),
        _stage,
        material,
        fallback=OfflineComposer(),
    )


def _texts(*texts: str) -> Step:
    return json_reply({"sentences": [{"slot": i, "text": t} for i, t in enumerate(texts, start=1)]})


async def test_the_model_is_given_slots_not_ids_and_writes_every_sentence(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([_texts(HEADLINE, HEDGED)])
    composed = await _compose(client)

    assert composed.composer_output["user_facing_answer"].splitlines()[0] == f"{HEADLINE} [1]"
    assert HEDGED in composed.composer_output["user_facing_answer"]
    check = composed.check.to_seed()
    assert check["answer_source"] == "composer"
    assert check["slots"]["model_sentences"] == 2 and check["slots"]["code_sentences"] == 0
    assert [n.kind for n in composed.notes] == [COMPOSER_SLOTS]
    (request,) = fake.requests  # one request, no retry
    shown = json.loads(request.messages[3]["content"])
    assert [(s["slot"], s["kind"], s["draft"]) for s in shown["slots"]] == [
        (1, "headline", DRAFT_HEADLINE),
        (2, "hypothesis", HYPOTHESIS),
    ]
    assert all(set(slot) == {"slot", "kind", "draft"} for slot in shown["slots"])  # no claims, no ids
    assert "claim-1" not in request.messages[3]["content"]  # the model never binds ids
    assert composed.prompt_version == "composer-v7"
    assert composed.check.to_seed()["slots"]["offered_slots"] == 2


async def test_a_refused_slot_is_code_s_draft_and_the_others_stay_the_model_s(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    fake.script([_texts("payment-service has the HighCPUUsage alert firing at 97%.", HEDGED)])
    composed = await _compose(client)

    lines = composed.composer_output["user_facing_answer"].splitlines()
    assert lines[0] == f"{DRAFT_HEADLINE} [1]" and lines[-1] == f"- {HEDGED}"
    slots = composed.check.to_seed()["slots"]
    assert composed.check.answer_source == "composer_and_code"
    assert (slots["model_sentences"], slots["code_sentences"]) == (1, 1)
    (refused,) = slots["refused_slots"]
    assert refused["slot"] == 1 and "sentence.value@2" in refused["rules"]
    assert "slot 1 (sentence.value@2" in composed.notes[-1].detail
    assert len(fake.requests) == 1


async def test_a_copy_of_the_draft_is_code_s_sentence(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([_texts("  " + DRAFT_HEADLINE.replace("Yes. The", "yes.  the"), HEDGED)])
    composed = await _compose(client)
    slots = composed.check.to_seed()["slots"]
    assert (slots["model_sentences"], slots["copied_sentences"], slots["refused_slots"]) == (1, 1, [])
    assert composed.check.answer_source == "composer_and_code"


async def test_copying_every_slot_earns_the_model_nothing(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([_texts(DRAFT_HEADLINE, HYPOTHESIS)])
    composed = await _compose(client)
    assert composed.check.to_seed()["slots"]["model_sentences"] == 0
    assert composed.check.answer_source == "offline_fallback"
    assert any(n.kind == OFFLINE_FALLBACK for n in composed.notes)


async def test_a_slot_in_the_wrong_language_is_refused(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([_texts("payment-service 的 HighCPUUsage 告警正在触发，CPU 为 92%。", HEDGED)])
    composed = await _compose(client)
    (refused,) = composed.check.to_seed()["slots"]["refused_slots"]
    assert refused["slot"] == 1 and slot_check.SLOT_LANGUAGE in refused["rules"]


NONSENSE = "Monitoring is a journey rather than a destination, and every service has its seasons."


async def test_nonsense_that_states_no_fact_is_refused(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([_texts(NONSENSE, NONSENSE)])
    composed = await _compose(client)
    slots = composed.check.to_seed()["slots"]
    assert slots["model_sentences"] == 0
    assert all(slot_check.SLOT_FACTS in r["rules"] for r in slots["refused_slots"])
    assert composed.check.answer_source == "offline_fallback"


@pytest.mark.parametrize(
    "step",
    [
        reply("Thank you for your question. " + NONSENSE),
        reply(""),
        reply('{"sentences": []}'),
        Raw("<html><body>Sign in</body></html>", content_type="text/html"),
    ],
    ids=["prose", "empty", "no slot", "html"],
)
async def test_an_unusable_reply_leaves_code_s_whole_draft_named(
    client: LLMClient, fake: FakeOpenAI, step: Step
) -> None:
    fake.script([step] * 4)
    composed = await _compose(client)
    assert composed.composer_output["user_facing_answer"].splitlines()[0] == f"{DRAFT_HEADLINE} [1]"
    assert composed.check.answer_source == "offline_fallback"
    (note,) = [n for n in composed.notes if n.kind == OFFLINE_FALLBACK]
    assert note.detail.split(":")[0] in {"unusable_output", "endpoint_bad_reply"}, note.detail


def _finding(values: int, length: int = 0) -> Sentence:
    """A draft finding holding `values` names and values, padded to about `length` characters."""
    text = " ".join(f"v{i}=1{i}" for i in range(values)) + "."
    return Sentence("finding", text + " ok" * max(0, (length - len(text)) // 3), ("claim-1",))


def test_a_draft_holding_more_values_than_a_rewrite_keeps_is_not_offered() -> None:
    many = llm_composer.MAX_KEY_TERMS + 1
    slots = [_finding(many), _finding(2), _finding(many), _finding(3)]
    assert llm_composer.offered(slots) == [1, 3]


def test_fixed_wordings_and_quoted_lines_are_not_offered() -> None:
    line = 'A matching log line: "2026-11-20 11:59:44 FATAL payments-db sorry, too many clients already".'
    slots = [
        Sentence("absence", "This query found no matching evidence of a error_rate series for gateway."),
        Sentence("could_not_check", "query_logs failed: connection refused."),
        Sentence("finding", line),
        _finding(2),
    ]
    assert llm_composer.offered(slots) == [3]


def test_a_request_offers_at_most_a_few_short_slots() -> None:
    assert llm_composer.offered([_finding(1)] * 9) == list(range(llm_composer.MAX_SLOTS))
    long = llm_composer.MAX_DRAFT_CHARS // 2 + 10
    assert llm_composer.offered([_finding(1, long)] * 3) == [0]  # the second would pass the budget
    assert llm_composer.offered([_finding(1, 2 * long)]) == [0]  # the first, whatever its length


async def test_a_slot_not_offered_is_code_s_sentence_not_a_refusal(
    client: LLMClient, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm_composer, "MAX_SLOTS", 1)
    fake.script([_texts(HEADLINE)])
    composed = await _compose(client)

    (request,) = fake.requests
    assert [s["slot"] for s in json.loads(request.messages[3]["content"])["slots"]] == [1]
    slots = composed.check.to_seed()["slots"]
    assert (slots["slots"], slots["offered_slots"], slots["model_sentences"]) == (2, 1, 1)
    assert slots["refused_slots"] == []
    assert composed.check.answer_source == "composer_and_code"
    assert "(1 not offered)" in composed.notes[-1].detail


async def test_with_no_slot_to_offer_code_writes_the_answer_without_asking(
    client: LLMClient, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm_composer, "MAX_KEY_TERMS", 0)
    composed = await _compose(client)

    assert fake.requests == []
    assert composed.composer_output["user_facing_answer"].splitlines()[0] == f"{DRAFT_HEADLINE} [1]"
    assert composed.check.answer_source == "composed_by_code"
    assert [n.kind for n in composed.notes] == [BY_CODE]
