"""rules.verbatim: an excerpt is its ref text's own words (issue 19, item 15)."""

from __future__ import annotations

import pytest

from evigate.rules import verbatim
from evigate.server.tools.registry import default_registry

CATALOG = default_registry().catalog()
NEGATIONS = verbatim.Negations.of(
    CATALOG.param("excerpt.negation_elided", "words"),
    CATALOG.param("excerpt.negation_elided", "cjk"),
    CATALOG.param("excerpt.negation_elided", "cjk_except"),
)
LOG = (
    "2026-07-08 23:05:28 ERROR order-service HikariPool-1 - Connection is not available, "
    "request timed out after 30000ms"
)
ALERT = "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m, threshold=85%"
ZH = "网关日志：上游 user-service 响应超时 5000ms，服务暂时不可用，非常缓慢，返回 HTTP 504"


@pytest.mark.parametrize(
    ("excerpt", "text"),
    [
        (LOG, LOG),
        ("error ORDER-SERVICE hikaripool-1 - connection IS NOT available", LOG),
        ("23:05:28 ERROR … request timed out after 30000ms", LOG),
        ("Connection is not available request timed out", LOG),  # a comma left out
        ("current=92%; state=firing; HighCPUUsage", ALERT),  # fields in any order
        ("HighCPUUsage … threshold=85%", ALERT),
        ("上游 user-service 响应超时 5000ms, 服务暂时不可用", ZH),  # half-width comma, spaces
        ("网关日志 上游user-service响应超时", ZH),  # the full-width colon and spaces dropped
        ("ＨＴＴＰ　５０４", ZH),  # full-width letters, digits and space
        ("上游 user-service … 缓慢", ZH),  # 非常 ("very") is no negation
        ("request timed out after 30000ms, HikariPool-1 - Connection is not available", LOG),  # clauses
        ("request timed out; ERROR … HikariPool-1\nConnection is not available", LOG),  # in any order
        ("返回 HTTP 504，服务暂时不可用；上游 user-service 响应超时", ZH),
    ],
)
def test_the_refs_own_words_are_supported(excerpt: str, text: str) -> None:
    assert verbatim.support(excerpt, text, NEGATIONS) == verbatim.SUPPORTED


@pytest.mark.parametrize(
    ("excerpt", "text", "unsupported"),
    [
        (
            f"{LOG}, and the service has since recovered fully",
            LOG,
            "and the service has since recovered fully",
        ),
        ("Connection is now available", LOG, "now available"),
        ("request timed out … Connection is not available", LOG, "connection is not available"),
        ("order-service HikariPool - Connection", LOG, "hikaripool - connection"),  # cut word
        ("state=resolved, HighCPUUsage", ALERT, "state=resolved"),
        ("current=92", ALERT, "current=92"),
        (f"{ZH}，目前已经完全恢复", ZH, "目前已经完全恢复"),
        ("服务暂时可用", ZH, "可用"),
        ("……", LOG, "……"),
        ("request timed out, the pool is exhausted, HikariPool-1", LOG, "the pool is exhausted"),  # inserted
        ("request timed out, Connection is available", LOG, "available"),  # negation dropped
        ("返回 HTTP 504，服务暂时没有不可用", ZH, "没有不可用"),  # negated
        ("返回 HTTP 504；上游 user-service 响应超时，目前已经完全恢复", ZH, "目前已经完全恢复"),  # appended
    ],
)
def test_words_the_ref_lacks_are_named(excerpt: str, text: str, unsupported: str) -> None:
    found = verbatim.support(excerpt, text, NEGATIONS)
    assert not found.ok
    assert found.unsupported == unsupported


@pytest.mark.parametrize(
    ("excerpt", "text", "negation"),
    [
        ("Connection is … available", LOG, "not"),
        ("available, request timed out", LOG, "not"),
        ("上游 user-service … 可用", ZH, "不"),
        ("可用", ZH, "不"),
        ("返回 HTTP 504，可用", ZH, "不"),  # a clause quoted without its negation
        ("It is … to be reached", "It is never going to be reached", "never"),
        ("the pool … recover", "the pool couldn't recover", "couldn't"),
    ],
)
def test_a_left_out_negation_is_found(excerpt: str, text: str, negation: str) -> None:
    assert verbatim.support(excerpt, text, NEGATIONS) == verbatim.Support(negation=negation)
    assert verbatim.support(excerpt, text, None).ok  # the rule switched off


def test_a_verbatim_quote_after_a_negation_is_found_on_the_fast_path() -> None:
    assert verbatim.quoted_negation(LOG, LOG.index("available"), NEGATIONS) == "not"
    assert verbatim.quoted_negation(LOG, LOG.index("request"), NEGATIONS) == ""
    assert verbatim.quoted_negation(ZH, ZH.index("可用"), NEGATIONS) == "不"
