"""Entity extraction: a table of Chinese and English questions and what each names."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from evigate.server.understanding.entities import extract
from tests.agents.offline.demo_catalog import TEST_VIEW


@dataclass(frozen=True)
class Case:
    question: str
    services: tuple[str, ...] = ()
    alerts: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    level: str | None = None
    window: int | None = None
    current: bool = False
    intents: tuple[str, ...] = ()


CASES = [
    Case(
        "payment-service 现在有 HighCPUUsage 告警吗？",
        ("payment-service",),
        ("HighCPUUsage",),
        current=True,
        intents=("alert",),
    ),
    Case(
        "Is there a HighCPUUsage alert firing on payment-service right now?",
        ("payment-service",),
        ("HighCPUUsage",),
        current=True,
        intents=("alert",),
    ),
    Case(
        "inventory-service 有没有 HikariCP 连接池耗尽的日志？",
        ("inventory-service",),
        terms=("HikariCP",),
        intents=("log",),
    ),
    Case(
        "Any HikariCP pool exhaustion logs for inventory-service?",
        ("inventory-service",),
        terms=("HikariCP",),
        intents=("log",),
    ),
    Case("inventory-service 连接池耗尽了吗", ("inventory-service",), terms=("HikariCP",), intents=("log",)),
    Case(
        "order-service 最近30分钟有 HikariPool-1 的错误日志吗？",
        ("order-service",),
        terms=("HikariPool-1",),
        level="ERROR",
        window=30,
        intents=("log",),
    ),
    Case(
        "order-service HikariPool-1 errors in the last 2 hours",
        ("order-service",),
        terms=("HikariPool-1",),
        level="ERROR",
        window=120,
        intents=("log",),
    ),
    Case(
        "Any connection pool exhaustion on order-service in the last hour?",
        ("order-service",),
        terms=("HikariCP",),
        window=60,
        intents=("log",),
    ),
    Case(
        "user-service 有 OutOfMemoryError 吗？",
        ("user-service",),
        terms=("OutOfMemoryError",),
        intents=("log",),
    ),
    Case(
        "user-service 最近一小时有内存溢出日志吗",
        ("user-service",),
        terms=("OutOfMemoryError",),
        window=60,
        intents=("log",),
    ),
    Case(
        "Does user-service log OOM errors?",
        ("user-service",),
        terms=("OutOfMemoryError",),
        level="ERROR",
        intents=("log",),
    ),
    Case("api-gateway 有超时日志吗？", ("api-gateway",), terms=("timeout",), intents=("log",)),
    Case(
        "Are there timeout logs on api-gateway in the past 3 hours?",
        ("api-gateway",),
        terms=("timeout",),
        window=180,
        intents=("log",),
    ),
    Case(
        "user-service 最近两小时有警告日志吗", ("user-service",), level="WARN", window=120, intents=("log",)
    ),
    Case(
        "payment-service WARN logs in the last 45 minutes",
        ("payment-service",),
        level="WARN",
        window=45,
        intents=("log",),
    ),
    Case("支付服务 CPU 使用率告警", ("payment-service",), ("HighCPUUsage",), intents=("alert",)),
    Case(
        "订单服务的错误率告警现在还在吗？",
        ("order-service",),
        ("HighErrorRate",),
        current=True,
        intents=("alert",),
    ),
    Case(
        "Is HighErrorRate currently firing for order-service?",
        ("order-service",),
        ("HighErrorRate",),
        current=True,
        intents=("alert",),
    ),
    Case(
        "inventory-service 有 PodRestart 告警吗", ("inventory-service",), ("PodRestart",), intents=("alert",)
    ),
    Case("现在有哪些告警在触发？", current=True, intents=("alert",)),
    Case("HikariCP 连接池耗尽怎么处理？", terms=("HikariCP",), intents=("knowledge",)),
    Case(
        "How do I handle a HighErrorRate alert on order-service?",
        ("order-service",),
        ("HighErrorRate",),
        intents=("alert", "knowledge"),
    ),
    Case(
        "Does order-service log java.sql.SQLTransientConnectionException?",
        ("order-service",),
        terms=("java.sql.SQLTransientConnectionException",),
        intents=("log",),
    ),
    Case(
        "payment-service 现在有 HighCPUUsage 告警吗？同时看看有没有 ERROR 日志",
        ("payment-service",),
        ("HighCPUUsage",),
        level="ERROR",
        current=True,
        intents=("alert", "log"),
    ),
    Case(
        "order-service and inventory-service: any HikariCP logs?",
        ("order-service", "inventory-service"),
        terms=("HikariCP",),
        intents=("log",),
    ),
    Case(
        "checkout-service 有 NullPointerException 日志吗",
        ("checkout-service",),
        terms=("NullPointerException",),
        intents=("log",),
    ),
    Case(
        "gateway 最近半小时有没有 connection refused",
        ("gateway",),
        terms=("Connection refused",),
        window=30,
        intents=("log",),
    ),
    Case("网关有 502 错误日志吗？", ("gateway",), terms=("502",), level="ERROR", intents=("log",)),
    Case(
        "Any 503 errors on gateway in the last 15 minutes?",
        ("gateway",),
        terms=("503",),
        level="ERROR",
        window=15,
        intents=("log",),
    ),
    Case(
        "inventory-service 有 PodRestartsHigh 告警吗",
        ("inventory-service",),
        ("PodRestartsHigh",),
        intents=("alert",),
    ),
    Case(
        "payment-service CPU 使用率超过 90% 的告警",
        ("payment-service",),
        ("HighCPUUsage",),
        intents=("alert",),
    ),
    Case("What is the weather today?"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.question for c in CASES])
def test_extract(case: Case) -> None:
    entities = extract(case.question, TEST_VIEW)
    assert entities.services == case.services
    assert entities.alert_names == case.alerts
    assert tuple(term.name for term in entities.log_terms) == case.terms
    assert entities.level == case.level
    assert entities.window_minutes == case.window
    assert entities.current is case.current
    assert entities.intents == case.intents


def test_at_least_25_questions_in_both_languages() -> None:
    chinese = [c for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c.question)]
    assert len(CASES) >= 25
    assert len(chinese) >= 10
    assert len(CASES) - len(chinese) >= 10


def test_concept_terms_search_by_pattern_and_literals_by_keyword() -> None:
    concept = extract("inventory-service HikariCP 日志", TEST_VIEW).log_terms[0]
    literal = extract("order-service HikariPool-1 日志", TEST_VIEW).log_terms[0]
    assert concept.arguments() == {"pattern": "HikariCP|HikariPool|Connection is not available"}
    assert literal.arguments() == {"keyword": "HikariPool-1"}


def test_known_service_list_is_extensible() -> None:
    assert extract("billing 有告警吗", ("billing",)).services == ("billing",)


@pytest.mark.parametrize(
    "phrase,minutes",
    [
        ("最近十分钟", 10),
        ("最近十五分钟", 15),
        ("最近三十分钟", 30),
        ("过去二十四小时", 1440),
        ("近两天", 2880),
        ("最近半小时", 30),
    ],
)
def test_chinese_numeral_windows(phrase: str, minutes: int) -> None:
    assert extract(f"order-service {phrase}有 ERROR 日志吗", TEST_VIEW).window_minutes == minutes


def test_a_camelcase_service_name_is_a_service_not_an_alert() -> None:
    from evigate.server.sources.services import CatalogView

    view = CatalogView({"order-router": ("log",), "RiskScorer": ("alert",)}, alert_names=("RiskModelStale",))
    router = extract("Does OrderRouter have any alerts firing?", view)
    assert router.services == ("order-router",) and router.alert_names == ()
    risk = extract("RiskScorer 现在有告警吗？", view)
    assert risk.services == ("RiskScorer",) and risk.alert_names == ()
    # a CamelCase word the alert source knows stays the alert it names
    assert extract("Is RiskModelStale firing for RiskScorer?", view).alert_names == ("RiskModelStale",)


def test_a_paraphrased_alert_of_a_named_service_is_never_another_services_alert() -> None:
    from evigate.server.sources.services import CatalogView

    view = CatalogView(
        {name: ("alert",) for name in ("parcel-tracker", "label-printer", "label-printer-db")},
        alert_names=(
            *("ParcelTrackerErrorRateHigh", "LabelPrinterErrorRateHigh"),
            "LabelPrinterDbErrorRateHigh",
        ),
    )
    entities = extract("label-printer 的错误率告警还在吗？", view)
    assert entities.services == ("label-printer",)
    # its own alerts stay (a longer name that holds its name too); the tracker's is not its alert
    assert "ParcelTrackerErrorRateHigh" not in entities.alert_names
    assert "LabelPrinterErrorRateHigh" in entities.alert_names
    # a question about no service reads every alert its words describe
    assert "ParcelTrackerErrorRateHigh" in extract("错误率告警还在吗？", view).alert_names
