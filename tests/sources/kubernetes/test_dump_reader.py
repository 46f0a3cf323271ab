"""The dump reader and the summaries: every situation of the generated cluster is recognised in
the API's own words, a healthy workload shows no problem, and a broken file is skipped and named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from evigate.server.sources.kubernetes import rollouts
from evigate.server.sources.kubernetes.dump import read_dump
from evigate.server.sources.kubernetes.events import EventFilter, select
from evigate.server.sources.kubernetes.query import ObjectFilter, closest, objects


def _pod(dump: Path, namespace: str) -> dict[str, Any]:
    [found] = objects(read_dump(dump), ObjectFilter(kind="Pod", namespace=namespace))
    return found


def test_a_crash_looping_pod_shows_its_waiting_reason_last_exit_code_and_restarts(dump: Path) -> None:
    pod = _pod(dump, "payments")
    assert pod["problems"] == ["CrashLoopBackOff", "Error"]
    assert pod["restarts"] == 12 and pod["workload"] == "Deployment/payments"
    [c] = pod["containers"]
    assert c["state"]["reason"] == "CrashLoopBackOff"
    assert c["last_state"] == {**c["last_state"], "reason": "Error", "exit_code": 1}


def test_an_oom_killed_pod_shows_exit_code_137_and_sigkill(dump: Path) -> None:
    [c] = _pod(dump, "orders")["containers"]
    assert (c["last_state"]["reason"], c["last_state"]["exit_code"], c["last_state"]["signal"]) == (
        "OOMKilled",
        137,
        "SIGKILL",
    )


def test_image_pull_pending_and_missing_config_are_named_by_their_reasons(dump: Path) -> None:
    pull = _pod(dump, "checkout")
    assert pull["problems"] == ["ImagePullBackOff"]
    assert pull["containers"][0]["image"].endswith("checkout:2.4.1-rc0")
    pending = _pod(dump, "search")
    assert pending["phase"] == "Pending" and pending["problems"] == ["Unschedulable"]
    assert "Insufficient memory" in pending["scheduling"]
    config = _pod(dump, "billing")
    assert config["problems"] == ["CreateContainerConfigError"]
    assert config["containers"][0]["state"]["message"] == 'configmap "billing-config" not found'


def test_a_failing_probe_is_in_the_pods_events_rolled_up_to_its_deployment(dump: Path) -> None:
    state = read_dump(dump)
    assert _pod(dump, "inventory")["ready"] == "0/1"
    [event] = [e.item() for e in select(state, EventFilter(obj="inventory", reason="Unhealthy"))]
    assert event["workload"] == "Deployment/inventory" and event["count"] == 118
    assert event["message"] == "Readiness probe failed: HTTP probe failed with statuscode: 503"


def test_a_failed_job_an_hpa_at_max_and_node_pressure(dump: Path) -> None:
    state = read_dump(dump)
    [job] = objects(state, ObjectFilter(kind="Job"))
    assert job["problems"] == ["BackoffLimitExceeded"] and job["failed"] == 3
    [hpa] = objects(state, ObjectFilter(kind="HorizontalPodAutoscaler"))
    assert hpa["problems"][0] == "at max replicas" and (hpa["current"], hpa["max"]) == (10, 10)
    assert hpa["metrics"] == ["cpu 95%"]
    nodes = {n["name"]: n["problems"] for n in objects(state, ObjectFilter(kind="Node"))}
    assert nodes == {"worker-2": ["MemoryPressure"], "worker-1": []}
    [pvc] = objects(state, ObjectFilter(kind="PersistentVolumeClaim"))
    assert (pvc["phase"], pvc["storage_class"], pvc["problems"]) == ("Bound", "standard", [])


def test_the_rollout_history_names_the_image_and_env_changes_and_no_secret_value(dump: Path) -> None:
    newest, first = rollouts.history(read_dump(dump), "catalog", "catalog")
    assert (newest["revision"], newest["current"], first["revision"]) == (2, True, 1)
    assert "image catalog: catalog:1.4.0 → catalog:1.5.0" in newest["changes"]
    assert "env catalog.LOG_LEVEL: info → debug" in newest["changes"]
    assert "env catalog.DB_PASSWORD: (unset) → <secret catalog-db/password>" in newest["changes"]
    assert newest["created"] == "2026-07-08 11:15:00"


def test_a_healthy_workload_has_nothing_wrong(dump: Path) -> None:
    state = read_dump(dump)
    assert objects(state, ObjectFilter(namespace="shop", problems_only=True)) == []
    assert select(state, EventFilter(namespace="shop", type="Warning")) == []
    assert [o["name"] for o in objects(state, ObjectFilter(name="cart"))] == ["cart-7d9f8b6c5d-x2x4q", "cart"]


def test_an_unknown_name_finds_nothing_and_the_closest_names(dump: Path) -> None:
    state = read_dump(dump)
    assert objects(state, ObjectFilter(name="payment")) == []
    assert closest(state, "payment")[0] == "payments"


def test_a_truncated_file_is_skipped_and_named_and_the_rest_is_read(dump: Path, tmp_path: Path) -> None:
    broken = shutil.copytree(dump, tmp_path / "dump")
    text = (broken / "orders" / "pods.json").read_text(encoding="utf-8")
    (broken / "orders" / "pods.json").write_text(text[: len(text) // 2], encoding="utf-8")
    state = read_dump(broken)
    assert [u.what for u in state.unread] == ["orders/pods.json"]
    assert "not readable as JSON" in state.unread[0].reason
    assert _pod(broken, "payments")["problems"] == ["CrashLoopBackOff", "Error"]
    assert objects(state, ObjectFilter(kind="Pod", namespace="orders")) == []


def test_the_peer_dumps_are_read_whole() -> None:
    for dump in sorted(Path("tests/peer/holmes").glob("*/kube-dump")):
        state = read_dump(dump)
        assert not state.unread and state.of("Pod") and state.of("Node"), dump


def test_a_secret_in_a_dump_is_never_read(dump: Path, tmp_path: Path) -> None:
    """`kubectl get secrets -o json` beside the dump, and a Secret inside a mixed List: passed over,
    their data held nowhere in the state."""
    tree = tmp_path / "dump"
    shutil.copytree(dump, tree)
    secret = {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "catalog-db", "namespace": "catalog"},
        "data": {"password": "aHVudGVyMg=="},
    }
    write = json.dumps
    (tree / "catalog" / "secrets.json").write_text(
        write({"kind": "SecretList", "apiVersion": "v1", "items": [secret]}), encoding="utf-8"
    )
    (tree / "mixed.json").write_text(write({"kind": "List", "items": [secret]}), encoding="utf-8")
    state = read_dump(tree)
    assert "Secret" not in state.objects
    assert "aHVudGVyMg==" not in json.dumps(state.objects, default=str)
    assert state.count() == read_dump(dump).count()
