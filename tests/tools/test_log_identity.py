"""Which lines are a service's: those of its pod's workload (the layout) and those whose record
names it; a service no file or record names has no logs to check, which is not "nothing found"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tools.conftest import make_harness, write_world

POD = "shop_order-router-7d9f8b6c5d-x2kqz_0b1c2d3e-1111-2222-3333-444455556666"


def _world(tmp_path: Path) -> Path:
    root = write_world(tmp_path)
    container = root / "logs" / "pods" / POD / "app"
    container.mkdir(parents=True)
    records = [
        {
            "ts": "2026-07-08T23:00:00Z",
            "level": "error",
            "service": "routing-core",
            "msg": "route table stale",
        },
        {"ts": "2026-07-08T23:01:00Z", "level": "info", "msg": "request routed"},
    ]
    (container / "0.log").write_text(
        "".join(f"{r['ts'].replace('Z', '.000000000Z')} stdout F {json.dumps(r)}\n" for r in records)
    )
    return root


async def test_a_line_is_found_by_its_workload_and_by_its_record_service(tmp_path: Path) -> None:
    h = make_harness(_world(tmp_path))
    by_workload = await h.call("query_logs", service="order-router", since="1d")
    assert by_workload.raw_result is not None
    assert [i["message"] for i in by_workload.raw_result["logs"]] == ["request routed", "route table stale"]
    by_record = await h.call("query_logs", service="routing-core", since="1d")
    assert by_record.raw_result is not None
    assert [i["message"] for i in by_record.raw_result["logs"]] == ["route table stale"]


async def test_a_service_with_no_logs_is_could_not_check_not_nothing_found(tmp_path: Path) -> None:
    h = make_harness(_world(tmp_path))
    for tool in ("query_logs", "summarize_logs"):
        result = await h.call(tool, service="billing", since="1d")
        assert result.raw_result is None
        assert result.error is not None and result.error.startswith("no logs of billing are available")
        assert "order-router" in result.error
    empty = await h.call("query_logs", service="order-router", keyword="nothing-like-this", since="1d")
    assert empty.error is None  # the service has logs: this one is a real "nothing found"
