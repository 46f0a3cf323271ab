"""The offline Composer's answer stays short: about eight sentences besides its lists (steps, what
could not be checked), the most severe findings kept, unless the question asks for a list."""

from __future__ import annotations

import pytest

from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import ClaimFacts, Excerpt, Sentence, SentenceMaterial
from evigate.server.agents.offline import answer_length, answer_writer

MAX_PROSE = 8
LISTS = (SentenceKind.STEP, SentenceKind.COULD_NOT_CHECK)
FAILED = (
    "query_promql(signal=cpu, service=shop-api, since=1h) failed "
    "(prometheus at http://10.0.0.9:9090 is unreachable)"
)


def alert(i: int, severity: str) -> str:
    return (
        f"Alert{chr(65 + i)}High, service=shop-api, state=firing, current={50 + i}%, threshold=40%, "
        f"severity={severity}, starts_at=2026-07-08 23:{10 + i:02d}:00"
    )


def material(question: str, language: str) -> SentenceMaterial:
    claims = [
        ClaimFacts(
            f"claim-{i}",
            "observation",
            f"For shop-api, the Alert{chr(65 + i)}High alert is firing.",
            (
                Excerpt(
                    alert(i, "critical" if i in (9, 11) else "warning"), "", "query_metrics", f"$.alerts[{i}]"
                ),
            ),
        )
        for i in range(14)
    ]
    claims.append(ClaimFacts("call-1", "", FAILED, (Excerpt(FAILED, FAILED, "query_promql"),), True))
    return SentenceMaterial(tuple(claims), catalog=("shop-api",), question=question, language=language)


def prose(sentences: list[Sentence]) -> list[Sentence]:
    return [s for s in sentences if not s.fixed_line and s.kind not in LISTS]


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("What's wrong with shop-api?", "en"),
        ("shop-api 有什么问题？", "zh"),
        ("Anything wrong in shop-api's logs?", "en"),  # about the logs, but no list asked for
    ],
)
def test_at_most_eight_sentences_the_most_severe_kept(question: str, language: str) -> None:
    given = material(question, language)
    written = answer_writer.write({"verdict": "PASS"}, given)
    said = prose(written)
    assert len(said) <= MAX_PROSE, [s.text for s in said]
    bound = {c for s in said for c in s.claim_ids}
    assert {"claim-9", "claim-11"} <= bound  # the critical ones
    # what could not be checked is a list of its own, kept whatever the length
    assert [s.claim_ids for s in written if s.kind == SentenceKind.COULD_NOT_CHECK] == [("call-1",)]
    assert not any(check(written, given).sentences)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("List all alerts of shop-api.", "en"),
        ("列出 shop-api 的所有告警。", "zh"),
        ("Fetch the logs of shop-api.", "en"),  # the logs' items themselves, as the Planner lists them
        ("获取 shop-api 两个容器的日志。", "zh"),
    ],
)
def test_a_question_for_a_list_gets_the_list(question: str, language: str) -> None:
    given = material(question, language)
    written = answer_writer.write({"verdict": "PASS"}, given)
    bound = {c for s in prose(written) for c in s.claim_ids}
    assert len(bound) > MAX_PROSE
    assert not any(check(written, given).sentences)


def test_one_claims_many_findings_fill_the_room() -> None:
    """A claim of many excerpts (a survey of one service): its most severe sentences up to eight,
    not its first alone."""
    excerpts = tuple(
        Excerpt(alert(i, "critical" if i == 3 else "warning"), "", "query_metrics", f"$.alerts[{i}]")
        for i in range(12)
    )
    claim = ClaimFacts("claim-1", "observation", "shop-api has firing alerts.", excerpts)
    given = SentenceMaterial(
        (claim,), catalog=("shop-api",), question="What's wrong with shop-api?", language="en"
    )
    said = prose(answer_writer.write({"verdict": "PASS"}, given))
    assert len(said) == MAX_PROSE, [s.text for s in said]
    assert not any(check(said, given).sentences)


def test_a_further_sentence_naming_an_asked_term_is_kept_before_more_of_the_same() -> None:
    """ "WORKER TIMEOUT or 502?": the one timeout line is not cut for another 502."""
    lines = [f'claim-1 line: "POST /api/checkout" 502 at 11:{i:02d}' for i in range(6)]
    lines += [f'claim-2 line: "POST /api/checkout" 503 ReadTimeout at 11:{i:02d}' for i in range(6, 9)]
    lines.append("claim-2 line: FATAL WORKER TIMEOUT (pid:19)")
    found = [Sentence(SentenceKind.FINDING, text, (text.split(" ")[0],)) for text in lines]
    kept = answer_length.most_severe(found, 7, {"worker", "timeout", "502"})
    assert len(kept) == 7
    assert kept[-1].text.endswith("WORKER TIMEOUT (pid:19)")
    assert [s.text for s in kept] == sorted((s.text for s in kept), key=lines.index)  # in their order
    assert answer_length.most_severe(found, 7)[-1].text != lines[-1]  # without the asked terms: cut
