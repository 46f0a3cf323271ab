"""The JSON log line (through logging and through the per-call fast path) and the RPC metrics, as
the per-call wrapper produces them."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from evigate.server.grpc.logs import (
    FIELDS,
    CallContextFilter,
    JsonFormatter,
    call_context,
    configure,
    log_fields,
)
from evigate.server.grpc.metrics import Metrics

RPC = "/evigate.v1.FeedbackService/SubmitFeedback"


def _record(created: float, **extra: object) -> logging.LogRecord:
    record = logging.getLogger("evigate.rpc").makeRecord(
        "evigate.rpc", logging.INFO, __file__, 1, "rpc", (), None, extra=extra
    )
    record.created = created
    return record


@pytest.mark.parametrize(
    "created",
    [
        0.0,
        1.5,
        1_790_000_000.0,
        1_790_000_000.001,
        1_790_000_000.0005,
        1_790_000_059.9994,
        1_790_000_059.9999996,
    ],
)
def test_timestamp_is_the_isoformat_of_the_record_time(created: float) -> None:
    formatter = JsonFormatter()
    for _ in range(2):  # the second call reuses the cached second
        line = json.loads(formatter.format(_record(created)))
        assert line["ts"] == datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")


def test_fields_key_and_attributes_give_the_same_line() -> None:
    fields = {"rpc": RPC, "code": "OK", "latency_ms": 1.5, "session_id": "s-1"}
    formatter = JsonFormatter()
    via_fields = formatter.format(_record(1_790_000_000.25, **{FIELDS: dict(fields)}))
    via_attributes = formatter.format(_record(1_790_000_000.25, **fields))
    assert via_fields == via_attributes
    line = json.loads(via_fields)
    assert list(line) == ["ts", "level", "logger", "event", "rpc", "code", "latency_ms", "session_id"]
    assert '"rpc": "/evigate.v1.FeedbackService/SubmitFeedback"' in via_fields  # as grep finds it


def test_call_context_fills_what_the_line_does_not_name() -> None:
    token = call_context.set({"rpc": RPC, "session_id": "s-ctx"})
    try:
        named = _record(1.0, **{FIELDS: {"session_id": "s-own"}})
        attrs = _record(1.0, session_id="s-own")
        plain = _record(1.0)
        for record in (named, attrs, plain):
            assert CallContextFilter().filter(record)
    finally:
        call_context.reset(token)
    formatter = JsonFormatter()
    assert json.loads(formatter.format(named))["session_id"] == "s-own"
    assert json.loads(formatter.format(named))["rpc"] == RPC
    assert json.loads(formatter.format(attrs))["session_id"] == "s-own"
    assert json.loads(formatter.format(plain)) | {"ts": ""} == {
        "ts": "",
        "level": "info",
        "logger": "evigate.rpc",
        "event": "rpc",
        "rpc": RPC,
        "session_id": "s-ctx",
    }


def test_rpc_metrics_count_each_method_and_code_apart() -> None:
    metrics = Metrics()
    for code in ("OK", "OK", "NOT_FOUND"):
        metrics.observe_rpc(RPC, code, 0.002)
    value = metrics.registry.get_sample_value
    assert value("evigate_rpc_total", {"method": RPC, "code": "OK"}) == 2
    assert value("evigate_rpc_total", {"method": RPC, "code": "NOT_FOUND"}) == 1
    assert value("evigate_rpc_latency_seconds_count", {"method": RPC, "code": "OK"}) == 2
    assert value("evigate_rpc_latency_seconds_bucket", {"method": RPC, "code": "OK", "le": "0.0025"}) == 2
    assert value("evigate_rpc_latency_seconds_bucket", {"method": RPC, "code": "OK", "le": "0.001"}) == 0


@pytest.fixture
def json_stream(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """The root logger set up as `configure` does, writing to a buffer; restored afterwards."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    configure("INFO", "json")
    try:
        yield stream
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])


def test_log_fields_writes_the_line_the_logging_path_writes(json_stream: io.StringIO) -> None:
    logger = logging.getLogger("evigate.rpc")
    fields = {"rpc": RPC, "code": "OK", "latency_ms": 0.5, "session_id": "s-1"}
    log_fields(logger, logging.INFO, "rpc", dict(fields))
    logger.log(logging.INFO, "rpc", extra={FIELDS: dict(fields)})
    fast, slow = (json.loads(line) for line in json_stream.getvalue().splitlines())
    assert fast.pop("ts") and slow.pop("ts")
    assert fast == slow == {"level": "info", "logger": "evigate.rpc", "event": "rpc", **fields}


def test_log_fields_respects_the_level(json_stream: io.StringIO) -> None:
    log_fields(logging.getLogger("evigate.rpc"), logging.DEBUG, "rpc", {"rpc": RPC})
    assert json_stream.getvalue() == ""


def test_log_fields_takes_the_logging_path_when_another_handler_listens(
    json_stream: io.StringIO, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="evigate.rpc"):
        log_fields(logging.getLogger("evigate.rpc"), logging.INFO, "rpc", {"rpc": RPC, "code": "OK"})
    (record,) = [r for r in caplog.records if r.name == "evigate.rpc"]
    assert record.__dict__[FIELDS] == {"rpc": RPC, "code": "OK"}
    assert json.loads(json_stream.getvalue())["code"] == "OK"  # the JSON handler got it too


def test_rpc_latency_buckets_are_cumulative_and_bounds_inclusive() -> None:
    metrics = Metrics()
    for seconds in (0.001, 0.0011, 7.0, 100.0):  # on a bound, just above it, mid-range, beyond every bound
        metrics.observe_rpc(RPC, "OK", seconds)
    value = metrics.registry.get_sample_value
    labels = {"method": RPC, "code": "OK"}
    assert value("evigate_rpc_latency_seconds_bucket", {**labels, "le": "0.001"}) == 1
    assert value("evigate_rpc_latency_seconds_bucket", {**labels, "le": "0.0025"}) == 2
    assert value("evigate_rpc_latency_seconds_bucket", {**labels, "le": "10.0"}) == 3
    assert value("evigate_rpc_latency_seconds_bucket", {**labels, "le": "60.0"}) == 3
    assert value("evigate_rpc_latency_seconds_bucket", {**labels, "le": "+Inf"}) == 4
    assert value("evigate_rpc_latency_seconds_count", labels) == value("evigate_rpc_total", labels) == 4
    assert value("evigate_rpc_latency_seconds_sum", labels) == pytest.approx(107.0021)
