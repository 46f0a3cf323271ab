"""In-memory doubles for the storage seams (recorder, case library) and data-directory builders."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evigate.server.deadline import Deadline
from evigate.server.tools import SessionToolBox, ToolBackend, build_backend
from evigate.server.tools.calls import ToolCallResult


@dataclass(frozen=True)
class Case:
    case_id: str
    title: str
    root_cause: str
    solution: str
    fault_category: str = "GENERAL"


class MemoryRecorder:
    """Records like Repository.record_invocation: ids count up from 1."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    async def record_invocation(  # noqa: PLR0917 - storage's signature
        self,
        session_id: str,
        tool_name: str,
        arguments: dict[str, Any],
        status: str,
        error: str | None,
        raw_result: dict[str, Any] | None,
        retrieval_details: dict[str, Any],
        latency_ms: float,
        *,
        created_at: datetime | None = None,
    ) -> int:
        # Stored JSON must survive a round trip, as in a JSON column.
        row = json.loads(
            json.dumps(
                {
                    "session_id": session_id,
                    "tool_name": tool_name,
                    "arguments": arguments,
                    "status": status,
                    "error": error,
                    "raw_result": raw_result,
                    "retrieval_details": retrieval_details,
                    "latency_ms": latency_ms,
                }
            )
        )
        self.rows.append(row)
        return len(self.rows)


class MemoryCases:
    def __init__(self, cases: Sequence[Case] = (), fail: bool = False) -> None:
        self.cases = list(cases)
        self.fail = fail

    async def list_cases(self, limit: int = 1000) -> list[Case]:
        if self.fail:
            raise ConnectionError("database unreachable")
        return self.cases[:limit]


@dataclass
class Harness:
    backend: ToolBackend
    recorder: MemoryRecorder
    toolbox: SessionToolBox

    async def call(self, tool: str, **arguments: Any) -> ToolCallResult:
        return await self.toolbox.call(tool, arguments, Deadline.none())


def make_harness(data_dir: Path | None = None, cases: Sequence[Case] = (), **kwargs: Any) -> Harness:
    backend = build_backend(data_dir, MemoryCases(cases), **kwargs)
    recorder = MemoryRecorder()
    return Harness(backend, recorder, SessionToolBox(backend, recorder, "session-1"))


@pytest.fixture
def demo() -> Harness:
    return make_harness()


def write_world(root: Path, *, now: str = "2026-07-08T23:30:00Z") -> Path:
    """An empty data directory with a world.json; tests add what they need."""
    (root / "logs").mkdir(parents=True, exist_ok=True)
    (root / "knowledge").mkdir(exist_ok=True)
    (root / "world.json").write_text(json.dumps({"now": now}), encoding="utf-8")
    (root / "alerts.json").write_text("[]", encoding="utf-8")
    return root


def write_logs(root: Path, name: str, lines: Sequence[dict[str, Any]], ensure_ascii: bool = False) -> Path:
    path = root / "logs" / name
    path.write_text("".join(json.dumps(x, ensure_ascii=ensure_ascii) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return write_world(tmp_path / "data")


def leaf_values(item: Any) -> list[str]:
    """Every scalar in an item, as text: what a ref text must contain."""
    if isinstance(item, dict):
        return [v for value in item.values() for v in leaf_values(value)]
    if isinstance(item, list):
        return [v for value in item for v in leaf_values(value)]
    return [" ".join(str(item).split())]


def assert_refs_cover_items(result: ToolCallResult, key: str) -> None:
    assert result.raw_result is not None
    items = result.raw_result[key]
    refs = result.retrieval_details["evidence_refs"]
    assert [r["raw_path"] for r in refs] == [f"$.{key}[{i}]" for i in range(len(items))]
    for ref, item in zip(refs, items, strict=True):
        assert "\n" not in ref["text"]
        for value in leaf_values(item):
            assert value in ref["text"], (value, ref["text"])
