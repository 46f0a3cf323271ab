"""Values read aloud in every sentence the offline Composer writes, not only its headline:
`p99=4.2s` is "p99 4.2 s", `350ms` is "350 ms"; each still passes the sentence check against the
excerpt that writes it unspaced."""

from __future__ import annotations

import pytest

from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import ClaimFacts, Excerpt, SentenceMaterial
from evigate.server.agents.offline import answer_writer, readable

LATENCY = (
    "CheckoutLatencyHigh, service=checkout, state=firing, current=p99=4.2s, threshold=p99=2s, "
    "duration=12m, severity=critical, starts_at=2026-07-08 23:05:00"
)
SLOW = "CheckoutSlow, service=checkout, state=firing, current=350ms, threshold=200ms, severity=warning"


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("p99=4.2s", "p99 4.2 s"),
        ("350ms", "350 ms"),
        ("4.2s", "4.2 s"),
        ("92%", "92%"),
        ("25m", "25m"),
        ("x", "x"),
    ],
)
def test_a_value_is_spaced_from_its_unit(raw: str, spoken: str) -> None:
    assert readable.value(raw) == spoken


@pytest.mark.parametrize("language", ["en", "zh"])
def test_finding_sentences_space_their_values(language: str) -> None:
    claims = (
        ClaimFacts(
            "a",
            "observation",
            "checkout latency alert",
            (Excerpt(LATENCY, LATENCY, "query_metrics", "$.alerts[0]"),),
        ),
        ClaimFacts(
            "b", "observation", "checkout slow alert", (Excerpt(SLOW, SLOW, "query_metrics", "$.alerts[1]"),)
        ),
    )
    findings = checked_findings(claims, "checkout", "What's wrong with checkout?", language)
    assert "p99 4.2 s" in findings and "p99 2 s" in findings, findings
    assert "350 ms" in findings and "200 ms" in findings, findings
    assert "4.2s" not in findings and "350ms" not in findings, findings


def checked_findings(claims: tuple[ClaimFacts, ...], service: str, question: str, language: str) -> str:
    """The headline and findings the offline Composer writes, once each has passed the sentence check."""
    material = SentenceMaterial(claims, catalog=(service,), question=question, language=language)
    written = answer_writer.write({"verdict": "PASS"}, material)
    assert not any(check(written, material).sentences)
    return " ".join(s.text for s in written if s.kind in (SentenceKind.FINDING, SentenceKind.HEADLINE))


ONE_MINUTE = (
    'template="Login failed: <*>" count=2038 first=2025-11-21 09:58:01 last=2025-11-21 09:58:59 '
    'levels=ERROR example="Login failed: Connection to Redis timed out after 5000ms"'
)
TWO_HOURS = ONE_MINUTE.replace("last=2025-11-21 09:58:59", "last=2025-11-21 11:58:59")


@pytest.mark.parametrize(
    ("language", "text", "said", "not_said"),
    [
        ("en", ONE_MINUTE, "errors at 2025-11-21 09:58,", "between"),
        ("zh", ONE_MINUTE, "在 2025-11-21 09:58记录了", "之间"),
        ("en", TWO_HOURS, "between 2025-11-21 09:58 and 11:58", "errors at"),
        ("zh", TWO_HOURS, "在 2025-11-21 09:58 至 11:58 之间", "09:58记录"),
    ],
)
def test_a_template_within_one_minute_is_said_at_that_minute(
    language: str, text: str, said: str, not_said: str
) -> None:
    claims = (
        ClaimFacts(
            "a", "observation", "login errors", (Excerpt(text, text, "summarize_logs", "$.patterns[0]"),)
        ),
    )
    findings = checked_findings(claims, "my-app", "Why do logins fail?", language)
    assert said in findings and not_said not in findings, findings
