"""The committed sample trees read end to end: every format and layout, their bad lines, stack
traces, partial lines, rotation, time zones, Chinese text, and JSON and plain text agreeing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from evigate.server.sources.logs import LogEvent, LogSearch
from tests.sources.logs.readerkit import everything, reader

CHECKOUT = "var/log/pods/shop_checkout-7d9f8b6c5d-x2kqz_3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c/checkout"
DOCKER = "containers/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855/" + (
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855-json.log"
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("tree", "service", "count", "parsers"),
    [
        ("plain", "nginx", 4, {"json"}),
        ("plain", "order-service", 5, {"pattern:logback"}),
        ("plain", "worker", 4, {"pattern:python"}),
        ("plain", "inventory", 4, {"logfmt"}),
        ("plain", "payment-service", 9, {"json"}),
        ("plain", "legacy", 21, {"pattern:leading-timestamp"}),
        ("k8s", "checkout", 5, {"cri+json"}),
        ("k8s", "kafka", 2, {"cri+python_bracketed"}),  # the shipped "[time] LEVEL msg" layout
        ("docker", "inventory-service", 3, {"docker+pattern:logback"}),
    ],
)
def test_each_file_is_read_by_the_parser_its_content_calls_for(
    tree: str, service: str, count: int, parsers: set[str]
) -> None:
    result = everything(tree, service=service)
    assert result.total == count == len(result.events)
    assert {e.parser for e in result.events} == parsers
    assert all(e.service == service for e in result.events)


@pytest.mark.parametrize(
    ("tree", "skipped"),
    [
        (
            "plain",
            {
                "inventory/inventory.log:4 (not UTF-8)",  # gzip bytes in the middle of a text file
                "inventory/inventory.log:6 (truncated)",  # the writer was cut off mid-line
                "nginx/access.log:3 (not json)",  # a truncated JSON line
                "order-service/app.log:15 (not UTF-8)",  # binary bytes among the lines
                "order-service/app.log:21 (truncated)",
                "worker/worker.log:17 (not UTF-8)",  # Latin-1
                "payment-service/payment-service.log.1:2 (binary)",
            },
        ),
        ("k8s", {f"{CHECKOUT}/0.log:6 (not cri)", f"{CHECKOUT}/0.log:7 (not json)"}),
        ("docker", {f"{DOCKER}:6 (not docker)"}),
        ("same", set()),
    ],
)
def test_bad_lines_are_skipped_and_located(tree: str, skipped: set[str]) -> None:
    result = reader(tree, skipped_keep=50).search(LogSearch(limit=1000))
    found = {str(s) for s in result.skipped.first if "compressed stream" not in s.reason}
    assert found == skipped
    assert result.skipped.count == len(result.skipped.first)


def test_a_truncated_gzip_keeps_what_was_read() -> None:
    result = everything("plain", service="legacy")
    assert result.skipped.count == 1
    (broken,) = result.skipped.first
    assert (broken.file, broken.line) == ("legacy/legacy.log.1.gz", 21)
    assert "compressed stream ends early" in broken.reason
    assert [e.message for e in result.events[-3:]] == [f"legacy batch tick n={n}" for n in (2, 1, 0)]


def _one(tree: str, **filters: object) -> LogEvent:
    result = everything(tree, **filters)
    assert result.total == 1, [e.message for e in result.events]
    return result.events[0]


def test_logback_stack_trace_belongs_to_its_event() -> None:
    event = _one("plain", service="order-service", keyword="O1002")
    assert (event.file, event.line, event.level, event.message) == (
        "order-service/app.log", 3, "ERROR", "下单失败 orderId=O1002",
    )  # fmt: skip
    assert event.chain_text() == (
        "org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection"
        " ← Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available,"
        " request timed out after 30000ms. ← Caused by: java.net.SocketTimeoutException: connect timed out"
    )
    assert len(event.continuation) == 11
    assert event.continuation[-1] == "\t... 12 more"
    assert event.fields == {"thread": "http-nio-8080-exec-3", "logger": "c.s.order.service.OrderService"}


def test_python_traceback_chain_outermost_first() -> None:
    event = _one("plain", service="worker", level="ERROR", keyword="Invoice export failed")
    assert event.message == "Invoice export failed batch=77"
    assert event.chain_text() == "billing.errors.ExportError: no rate for CNY ← Caused by: KeyError: 'CNY'"


def test_rotated_files_read_in_time_order_with_gzip() -> None:
    result = everything("plain", service="payment-service")
    files = [e.file.rsplit("/", 1)[1] for e in reversed(result.events)]  # oldest first
    assert (
        files
        == ["payment-service.log.2.gz"] * 3 + ["payment-service.log.1"] * 3 + ["payment-service.log"] * 3
    )
    stamps = [e.timestamp for e in result.events]
    assert stamps == sorted(stamps, reverse=True)
    assert result.events[-1].timestamp == at("2026-07-08T21:00:00")  # epoch milliseconds
    assert [e.level for e in result.events[:3]] == ["FATAL", "ERROR", "WARN"]  # CRITICAL, ERROR, WARNING


@pytest.mark.parametrize(
    ("tree", "service", "keyword", "when"),
    [
        ("plain", "nginx", "O1001", "2026-07-08T23:04:58"),  # time_iso8601 at +08:00
        ("plain", "inventory", "deadlock", "2026-07-08T23:05:06"),  # logfmt at +08:00
        ("plain", "inventory", "slow query", "2026-07-08T23:05:05.250"),  # logfmt Z with millis
        ("plain", "order-service", "O1003", "2026-07-08T23:05:31.007"),  # no zone: the default, UTC
        ("k8s", "kafka", "Rolled", "2026-07-08T23:05:01.118"),  # the application's time, not the runtime's
    ],
)
def test_time_zones(tree: str, service: str, keyword: str, when: str) -> None:
    assert _one(tree, service=service, keyword=keyword).timestamp == at(when)


@pytest.mark.parametrize(
    ("tree", "keyword", "service", "message"),
    [
        ("plain", "下单失败", "order-service", "下单失败 orderId=O1003"),
        ("plain", "库存扣减失败", "inventory", "库存扣减失败: deadlock detected"),
        ("plain", "支付回调", "payment-service", "支付回调验签失败 orderId=O1002"),
        ("k8s", "重试支付", "checkout", "重试支付 cartId=C77 attempt=2"),
        ("docker", "扣减库存失败", "inventory-service", "扣减库存失败 sku=SKU-1001 <qty=2>"),
    ],
)
def test_chinese_messages(tree: str, keyword: str, service: str, message: str) -> None:
    event = everything(tree, keyword=keyword).events[0]
    assert (event.service, event.message) == (service, message)


def test_cri_partial_lines_are_joined_and_stack_field_read() -> None:
    cart = _one("k8s", keyword="Cart contents")
    assert cart.message.endswith("sku=SKU-0039 total=1234.50")
    assert (cart.file, cart.line) == (f"{CHECKOUT}/0.log", 2)
    failed = _one("k8s", service="checkout", level="ERROR")
    assert failed.fields["stream"] == "stderr"
    assert failed.fields["pod"] == "checkout-7d9f8b6c5d-x2kqz"
    assert failed.chain_text() == "java.net.SocketTimeoutException: Read timed out"
    old = everything("k8s", service="checkout").events[-1]
    assert (old.file, old.message) == (
        f"{CHECKOUT}/0.log.20260708-230000.gz",
        "Started CheckoutApplication in 7.2 seconds",
    )


def test_cri_records_of_a_stack_trace_form_one_event() -> None:
    event = _one("k8s", service="kafka", level="ERROR")
    assert event.chain_text() == (
        "org.apache.kafka.common.errors.NotLeaderOrFollowerException: "
        "This server is not the leader for that topic-partition."
    )
    assert event.fields["namespace"] == "shop"


def test_docker_json_file() -> None:
    event = _one("docker", level="ERROR")
    assert event.message == "扣减库存失败 sku=SKU-1001 <qty=2>"  # Docker's \u003c unescaped
    assert event.chain_text() == (
        "org.springframework.dao.CannotAcquireLockException: could not execute statement ← Caused by: "
        "java.sql.SQLTransactionRollbackException: Deadlock found when trying to get lock; "
        "try restarting transaction"
    )
    assert event.fields["stream"] == "stderr"
    assert _one("docker", keyword="<qty=2>").line == 2
    joined = _one("docker", keyword="SKU-2002")
    assert joined.message == "reserve sku=SKU-2002 qty=1 warehouse=WH-3"


def _answer(event: LogEvent) -> tuple[object, ...]:
    what = (event.timestamp, event.level, event.service, event.message, dict(event.fields))
    return (*what, event.continuation, event.exceptions)


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"level": "ERROR"},
        {"level": "WARNING"},
        {"keyword": "HikariPool"},
        {"keyword": "connection refused"},  # only in the stack trace
        {"keyword": "开票失败"},
        {"regex": r"INV-\d+ issued"},
        {"window": "2026-07-08T23:05:29/2026-07-08T23:05:31"},
    ],
)
def test_the_same_events_from_json_and_plain_text(filters: dict[str, object]) -> None:
    from evigate.server.queries.types import TimeWindow

    if "window" in filters:
        since, until = str(filters.pop("window")).split("/")
        filters["window"] = TimeWindow(at(since), at(until))
    from_json = everything("same/json", **filters)
    from_text = everything("same/text", **filters)
    assert from_json.total == from_text.total > 0
    assert [_answer(e) for e in from_json.events] == [_answer(e) for e in from_text.events]
    assert {e.parser for e in from_json.events} == {"json"}
    assert {e.parser for e in from_text.events} == {"pattern:logback"}


def test_result_items_hold_the_first_line_and_the_exception_chain() -> None:
    from evigate.server.sources.logs.items import log_item, skipped_summary, top_frames
    from evigate.server.tools.query_logs import log_text

    result = everything("plain", service="order-service", keyword="O1002")
    item = log_item(result.events[0])
    assert item == {
        "timestamp": "2026-07-08 23:05:28.123",
        "level": "ERROR",
        "service": "order-service",
        "message": "下单失败 orderId=O1002",
        "thread": "http-nio-8080-exec-3",
        "logger": "c.s.order.service.OrderService",
        "exception": result.events[0].chain_text(),
        "frames": top_frames(result.events[0]),
    }
    assert item["frames"].startswith(
        "at org.springframework.jdbc.datasource.DataSourceUtils.getConnection(DataSourceUtils.java:84) | at "
    )
    assert item["frames"].count(" | ") == 2  # the top three
    assert result.parsers == {"order-service/app.log": "pattern:logback"}
    text = log_text(item)
    assert text.startswith("2026-07-08 23:05:28.123 ERROR order-service 下单失败 orderId=O1002 | thread=")
    assert (
        "Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available"
        in text
    )
    assert "\tat " not in text
    summary = skipped_summary(everything("plain", service="payment-service").skipped)
    assert summary == {"skipped_lines": 1, "skipped_at": ["payment-service/payment-service.log.1:2 (binary)"]}
