"""The sentence check's subject rule over services named `namespace/name` (an alert's service label
`shop/checkout`, a Kubernetes workload): the claim's subject matches the name as written, and the
catalog's bare name when the catalog knows it; another namespace's service is another subject."""

from __future__ import annotations

import pytest

from evigate.rules import sentence_types as t
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_check import check
from evigate.rules.sentence_types import ClaimFacts, Excerpt, Sentence, SentenceMaterial

CHECKOUT = (
    "CheckoutLatencyHigh, service=shop/checkout, state=firing, current=4.2s, threshold=2s, "
    "severity=critical, starts_at=2026-07-08 23:05:00"
)
STAGING = (
    "CheckoutLatencyHigh, service=staging/checkout, state=resolved, current=1.1s, threshold=2s, "
    "severity=warning, starts_at=2026-07-08 22:05:00"
)
CLAIMS = (
    ClaimFacts(
        "shop",
        "observation",
        "For shop/checkout, the CheckoutLatencyHigh alert is firing.",
        (Excerpt(CHECKOUT, CHECKOUT, "query_metrics", "$.alerts[0]"),),
    ),
    ClaimFacts(
        "staging",
        "observation",
        "For staging/checkout, the CheckoutLatencyHigh alert has resolved.",
        (Excerpt(STAGING, STAGING, "query_metrics", "$.alerts[1]"),),
    ),
)
CATALOGS = [(), ("checkout", "payments"), ("shop/checkout", "staging/checkout", "payments")]

VALID = [
    ("en", "The CheckoutLatencyHigh alert of shop/checkout is firing at 4.2 s.", ("shop",)),
    ("en", "shop/checkout: CheckoutLatencyHigh is firing (threshold 2 s).", ("shop",)),
    ("en", "For shop/checkout, the CheckoutLatencyHigh alert is firing.", ("shop",)),
    ("en", "The CheckoutLatencyHigh alert of staging/checkout has resolved.", ("staging",)),
    ("zh", "shop/checkout 的 CheckoutLatencyHigh 告警正在触发（当前 4.2s，阈值 2s）。", ("shop",)),
    ("zh", "staging/checkout 的 CheckoutLatencyHigh 告警已恢复。", ("staging",)),
]
FALSE = [
    # another namespace's service, its state or its value
    ("en", "The CheckoutLatencyHigh alert of staging/checkout is firing.", ("shop",), t.SUBJECT),
    ("en", "The CheckoutLatencyHigh alert of shop/checkout has resolved.", ("shop",), t.STATE),
    ("en", "The CheckoutLatencyHigh alert of shop/checkout has resolved.", ("shop", "staging"), t.STATE),
    (
        "en",
        "The CheckoutLatencyHigh alert of staging/checkout is firing at 4.2 s.",
        ("shop", "staging"),
        t.STATE,
    ),
    ("zh", "staging/checkout 的 CheckoutLatencyHigh 告警正在触发。", ("shop",), t.SUBJECT),
    ("zh", "shop/checkout 的 CheckoutLatencyHigh 告警已恢复。", ("shop",), t.STATE),
    ("en", "The CheckoutLatencyHigh alert of shop/payments is firing.", ("shop",), ""),
]


def material(catalog: tuple[str, ...], language: str) -> SentenceMaterial:
    return SentenceMaterial(CLAIMS, catalog=catalog, language=language)


@pytest.mark.parametrize("catalog", CATALOGS)
@pytest.mark.parametrize(("language", "text", "bound"), VALID)
def test_a_namespaced_service_is_the_subject_of_its_claim(
    catalog: tuple[str, ...], language: str, text: str, bound: tuple[str, ...]
) -> None:
    result = check([Sentence(SentenceKind.FINDING, text, bound)], material(catalog, language))
    assert [(v.rule_id, v.token) for v in result.sentences[0]] == []


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "The CheckoutLatencyHigh alert of checkout is firing."),
        ("zh", "checkout 的 CheckoutLatencyHigh 告警正在触发。"),
    ],
)
def test_the_catalogs_bare_name_is_the_namespaced_services_subject(language: str, text: str) -> None:
    result = check([Sentence(SentenceKind.FINDING, text, ("shop",))], material(("checkout",), language))
    assert [(v.rule_id, v.token) for v in result.sentences[0]] == []


@pytest.mark.parametrize("catalog", CATALOGS)
@pytest.mark.parametrize(("language", "text", "bound", "rule"), FALSE)
def test_another_namespace_is_another_subject(
    catalog: tuple[str, ...], language: str, text: str, bound: tuple[str, ...], rule: str
) -> None:
    result = check([Sentence(SentenceKind.FINDING, text, bound)], material(catalog, language))
    found = {v.rule_id for v in result.sentences[0]}
    assert found, text
    assert not rule or rule in found, found
