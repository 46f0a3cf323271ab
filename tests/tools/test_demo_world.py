"""The bundled demo world supports docs/design.md §8.8's reference sessions and the README's questions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evigate.server.deadline import Deadline
from evigate.server.tools import build_backend, demo_data_dir
from tests.tools.conftest import Harness, MemoryCases

SERVICES = {"payment-service", "order-service", "inventory-service", "user-service", "gateway"}


def test_world_files_and_size() -> None:
    root = demo_data_dir()
    world = json.loads((root / "world.json").read_text(encoding="utf-8"))
    assert world["now"] == "2026-07-08T23:30:00Z" and set(world["services"]) == SERVICES
    total = sum(p.stat().st_size for p in (root / "logs").glob("*.ndjson"))
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (root / "logs").glob("*.ndjson"))
    assert total < 2_000_000 and lines >= 2000
    assert "hikari" not in (root / "logs" / "inventory-service.ndjson").read_text(encoding="utf-8").lower()
    assert "HikariPool-1 - Connection is not available, request timed out after 30000ms" in (
        root / "logs" / "order-service.ndjson"
    ).read_text(encoding="utf-8")


def test_generator_is_deterministic(tmp_path: Path) -> None:
    root = demo_data_dir()
    script = Path(__file__).resolve().parents[2] / "scripts" / "generate_demo.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True, timeout=60)
    for name in ["alerts.json", "world.json", *(f"logs/{p.name}" for p in (root / "logs").glob("*.ndjson"))]:
        assert (tmp_path / name).read_bytes() == (root / name).read_bytes(), name


def test_missing_data_dir(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not found"):
        build_backend(tmp_path / "nope", MemoryCases())


QUESTIONS = [
    # (tool, arguments, expected evidence_status)
    (
        "query_metrics",
        {"service": "payment-service", "alert_name": "HighCPUUsage", "state": "firing"},
        "supported",
    ),
    ("query_logs", {"service": "inventory-service", "keyword": "HikariCP"}, "no_evidence"),
    ("query_logs", {"service": "order-service", "keyword": "HikariCP"}, "supported"),
    ("query_metrics", {"service": "order-service", "alert_name": "HighErrorRate"}, "supported"),
    (
        "query_metrics",
        {"service": "user-service", "alert_name": "HighMemoryUsage", "state": "firing"},
        "no_evidence",
    ),
    (
        "query_metrics",
        {"service": "user-service", "alert_name": "HighMemoryUsage", "state": "resolved"},
        "supported",
    ),
    ("query_metrics", {"service": "inventory-service", "alert_name": "PodRestartsHigh"}, "supported"),
    ("query_metrics", {"service": "gateway", "alert_name": "HighCPUUsage"}, "no_evidence"),
    ("query_logs", {"service": "user-service", "keyword": "OutOfMemoryError"}, "supported"),
    ("query_logs", {"service": "payment-service", "keyword": "OutOfMemoryError"}, "no_evidence"),
    ("query_logs", {"service": "gateway", "keyword": "502 Bad Gateway", "since": "30m"}, "supported"),
    ("query_logs", {"service": "payment-service", "keyword": "支付回调处理超时"}, "supported"),
    ("query_logs", {"service": "user-service", "keyword": "用户登录失败"}, "supported"),
    ("query_logs", {"service": "inventory-service", "keyword": "Liveness probe failed"}, "supported"),
    ("query_logs", {"service": "payment-service", "level": "ERROR", "keyword": "Full GC"}, "no_evidence"),
    (
        "query_logs",
        {"service": "order-service", "pattern": "timed out after \\d+ms", "since": "1h"},
        "supported",
    ),
    (
        "query_logs",
        {"service": "order-service", "keyword": "timed out after 30000ms", "since": "1h"},
        "supported",
    ),
    ("lookup_knowledge", {"query": "HighCPUUsage 告警一般怎么排查？"}, "supported"),
    ("lookup_knowledge", {"query": "数据库连接池满了怎么办？"}, "supported"),
    ("lookup_knowledge", {"query": "How do I cook braised pork?"}, "no_evidence"),
]


@pytest.mark.parametrize(("tool", "arguments", "status"), QUESTIONS)
async def test_readme_questions(demo: Harness, tool: str, arguments: dict[str, str], status: str) -> None:
    result = await demo.toolbox.call(tool, arguments, Deadline.none())
    assert result.retrieval_details["evidence_status"] == status
