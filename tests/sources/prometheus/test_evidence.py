"""query_promql's evidence: one ref per series, `$.series[i]`, and a small JSON raw result."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from evigate.server.sources.evidence import promql_evidence
from evigate.server.sources.prom_types import QueryResult, RangeSpec, Sample, Series
from evigate.server.sources.prometheus import Prometheus
from evigate.server.sources.series_text import result_texts
from tests.sources.conftest import Store
from tests.sources.exporter import Exporter

T0 = datetime(2026, 7, 8, 10, 0, tzinfo=UTC).timestamp()


def test_a_range_result_becomes_one_ref_and_one_summary_item_per_series() -> None:
    series = tuple(
        Series(
            {"__name__": "up", "job": j}, (Sample(T0, 1), Sample(T0 + 60, float("nan")), Sample(T0 + 120, 0))
        )
        for j in ("a", "b")
    )
    result = QueryResult("up", "matrix", series, 7, range=RangeSpec(T0, T0 + 120, 60), notes=("cut",))
    evidence = promql_evidence(result)
    assert [r["raw_path"] for r in evidence.refs] == ["$.series[0]", "$.series[1]"]
    assert [r["text"] for r in evidence.refs] == result_texts(result)
    assert evidence.total == 7 and evidence.raw["truncated"] is True and evidence.raw["notes"] == ["cut"]
    assert evidence.raw["window"] == {"start": "2026-07-08 10:00", "end": "2026-07-08 10:02", "step": "1m"}
    assert evidence.raw["series"][0] == {
        "metric": "up", "labels": {"job": "a"}, "points": 3,
        "first": {"time": "2026-07-08 10:00", "value": 1.0},
        "last": {"time": "2026-07-08 10:02", "value": 0.0},
        "min": {"time": "2026-07-08 10:02", "value": 0.0},
        "max": {"time": "2026-07-08 10:00", "value": 1.0},
        "avg": 0.5,
    }  # fmt: skip
    json.dumps(evidence.raw, allow_nan=False)  # storable in a JSON column


def test_an_empty_result_has_no_refs_so_the_tool_records_no_evidence() -> None:
    evidence = promql_evidence(QueryResult("up{job='x'}", "vector", (), 0))
    assert evidence.refs == [] and evidence.total == 0 and evidence.raw["series"] == []


async def test_a_live_instant_query_gives_refs_for_every_series(
    prom: Prometheus, exporter: Exporter, service: str, store: Store
) -> None:
    for shard in ("a", "b"):
        exporter.fanout.labels(service, shard).set(0.5)
    selector = f'sum by (shard) (test_fanout{{service="{service}"}})'

    async def both() -> QueryResult | None:
        result = await prom.query(selector)
        return result if len(result.series) == 2 else None

    result = await store.eventually(both, "two shards")
    evidence = promql_evidence(result, unit="ratio")
    assert [r["raw_path"] for r in evidence.refs] == ["$.series[0]", "$.series[1]"]
    assert evidence.refs[0]["text"].startswith(f"{selector}{{shard=a}} value=0.5 (50%) at ")
    assert evidence.raw["series"][1]["labels"] == {"shard": "b"} and evidence.raw["unit"] == "ratio"
    json.dumps(evidence.raw, allow_nan=False)
    end = datetime.now(UTC)
    ranged = promql_evidence(await prom.query_range(selector, end - timedelta(seconds=30), end))
    assert ranged.raw["window"]["step"] == "1s" and "first" in ranged.raw["series"][0]
