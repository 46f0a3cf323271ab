from __future__ import annotations

import json
from pathlib import Path

from tests.tools.conftest import Harness, assert_refs_cover_items, make_harness


async def test_highcpu_on_payment_service_is_firing_at_92_percent(demo: Harness) -> None:
    result = await demo.call("query_metrics", service="payment-service", alert_name="HighCPUUsage")
    assert result.status == "success"
    assert result.retrieval_details["evidence_status"] == "supported"
    assert result.retrieval_details["match_level"] == "L0"
    assert result.raw_result is not None
    [alert] = result.raw_result["alerts"]
    assert (alert["state"], alert["current"], alert["duration"]) == ("firing", "92%", "25m")
    [ref] = result.retrieval_details["evidence_refs"]
    assert ref["raw_path"] == "$.alerts[0]"
    # The seed's excerpt is a prefix of the ref text.
    assert ref["text"].startswith(
        "HighCPUUsage, service=payment-service, state=firing, current=92%, duration=25m"
    )
    assert_refs_cover_items(result, "alerts")


async def test_filters_are_exact_and_case_insensitive(demo: Harness) -> None:
    result = await demo.call("query_metrics", service="ORDER-SERVICE")
    assert result.raw_result is not None
    names = sorted(a["alert_name"] for a in result.raw_result["alerts"])
    assert names == ["HighErrorRate", "HighLatency"]
    partial = await demo.call("query_metrics", service="order")
    assert partial.retrieval_details["evidence_status"] == "no_evidence"


async def test_state_filter_and_firing_first(demo: Harness) -> None:
    firing = await demo.call("query_metrics", state="firing")
    resolved = await demo.call("query_metrics", state="resolved")
    everything = await demo.call("query_metrics")
    assert firing.raw_result and resolved.raw_result and everything.raw_result
    assert {a["state"] for a in firing.raw_result["alerts"]} == {"firing"}
    assert {a["state"] for a in resolved.raw_result["alerts"]} == {"resolved"}
    assert firing.raw_result["total"] + resolved.raw_result["total"] == everything.raw_result["total"] == 8
    states = [a["state"] for a in everything.raw_result["alerts"]]
    assert states == sorted(states, key=lambda s: s != "firing")
    assert_refs_cover_items(everything, "alerts")


async def test_user_service_cpu_alert_is_only_resolved(demo: Harness) -> None:
    now = await demo.call("query_metrics", service="user-service", alert_name="HighCPUUsage", state="firing")
    assert now.retrieval_details["evidence_status"] == "no_evidence"
    [ref] = now.retrieval_details["evidence_refs"]
    assert ref["text"] == (
        "query_metrics returned no evidence; evidence_status=no_evidence; "
        "query=user-service HighCPUUsage firing; service=user-service; alert_name=HighCPUUsage; "
        "state=firing; total=0; message=未找到匹配的告警"
    )
    before = await demo.call("query_metrics", service="user-service", alert_name="HighCPUUsage")
    assert (
        before.raw_result is not None and before.raw_result["alerts"][0]["ends_at"] == "2026-07-08 22:20:00"
    )


async def test_time_windows_absolute_and_relative(demo: Harness) -> None:
    # "now" is 23:30 in world.json: the last 30 minutes hold only the four firing alerts.
    recent = await demo.call("query_metrics", since="30m")
    assert recent.raw_result is not None
    assert {a["state"] for a in recent.raw_result["alerts"]} == {"firing"}
    evening = await demo.call("query_metrics", since="2026-07-08T21:00:00Z", until="2026-07-08T21:30:00Z")
    assert evening.raw_result is not None
    assert sorted(a["alert_name"] for a in evening.raw_result["alerts"]) == [
        "HighMemoryUsage",
        "PodRestartsHigh",
    ]
    none = await demo.call("query_metrics", since="2026-07-08T19:00:00", until="2026-07-08T19:30:00")
    assert none.retrieval_details["evidence_status"] == "no_evidence"
    text = none.retrieval_details["evidence_refs"][0]["text"]
    assert "since=2026-07-08 19:00:00" in text and "until=2026-07-08 19:30:00" in text and "total=0" in text


async def test_limit_keeps_the_total(demo: Harness) -> None:
    result = await demo.call("query_metrics", limit=3)
    assert result.raw_result is not None
    assert len(result.raw_result["alerts"]) == 3 and result.raw_result["total"] == 8
    assert len(result.retrieval_details["evidence_refs"]) == 3


async def test_corrupt_or_missing_alerts_fail(data_dir: Path) -> None:
    (data_dir / "alerts.json").write_text("[{", encoding="utf-8")
    h = make_harness(data_dir)
    result = await h.call("query_metrics", service="payment-service")
    assert (result.status, result.retrieval_details["evidence_status"]) == ("failed", "failed")
    assert result.error is not None and "corrupt alert data" in result.error
    assert result.retrieval_details["evidence_refs"] == []
    (data_dir / "alerts.json").write_text(json.dumps([{"alert_name": "X"}]), encoding="utf-8")
    missing_field = await h.call("query_metrics", service="payment-service")
    assert missing_field.status == "failed" and "service" in (missing_field.error or "")
    (data_dir / "alerts.json").unlink()
    gone = await h.call("query_metrics", service="payment-service")
    assert gone.status == "failed" and "alert data unavailable" in (gone.error or "")


async def test_alerts_file_may_be_an_object_and_is_reloaded(data_dir: Path) -> None:
    alert = {"alert_name": "DiskSpaceLow", "service": "db", "state": "FIRING", "current": "93%"}
    (data_dir / "alerts.json").write_text(json.dumps({"alerts": [alert]}), encoding="utf-8")
    h = make_harness(data_dir)
    result = await h.call("query_metrics", state="firing")
    assert result.raw_result is not None and result.raw_result["alerts"][0]["current"] == "93%"
    assert result.retrieval_details["evidence_refs"][0]["text"] == (
        "DiskSpaceLow, service=db, state=firing, current=93%"
    )


async def test_an_alert_on_a_pod_of_the_service_is_the_services_whatever_its_service_field(
    data_dir: Path,
) -> None:
    alerts = [
        {"alert_name": "PodOOMKilled", "service": "exporter", "state": "firing",
         "labels": {"pod": "exporter-fast-76897854c-xxljr"}},
        {"alert_name": "CrashLoop", "service": "exporter-fast", "state": "firing"},
        {"alert_name": "Other", "service": "exporter", "state": "firing",
         "labels": {"pod": "exporter-5d9f8b7c6-abcde"}},
    ]  # fmt: skip
    (data_dir / "alerts.json").write_text(json.dumps(alerts), encoding="utf-8")
    h = make_harness(data_dir)
    result = await h.call("query_metrics", service="exporter-fast")
    assert result.raw_result is not None
    assert sorted(a["alert_name"] for a in result.raw_result["alerts"]) == ["CrashLoop", "PodOOMKilled"]
