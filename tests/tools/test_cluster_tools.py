"""The cluster tools through the toolbox: one citable ref per object, event or revision holding
every field, the Gatekeeper checking excerpts of them, could-not-check for no cluster or a kind the
cluster refused, and no evidence naming the closest names."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.rules import gatekeeper
from evigate.rules.types import InvocationFacts
from evigate.server.sources.kubernetes.source import DumpCluster
from evigate.server.tools.registry import default_registry
from tests.rules.session import binding, claim, output
from tests.sources.kubernetes.scenarios import write_cluster
from tests.tools.conftest import Harness, leaf_values, make_harness, write_world


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cluster(tmp_path_factory.mktemp("cluster") / "dump")


@pytest.fixture
def harness(dump: Path, tmp_path: Path) -> Harness:
    made = make_harness(write_world(tmp_path / "data", now="2026-07-08T12:00:00Z"))
    made.backend.cluster = (DumpCluster(dump),)  # type: ignore[attr-defined]
    return made


async def test_query_k8s_cites_each_object_on_one_line_with_every_field(harness: Harness) -> None:
    result = await harness.call("query_k8s", name="orders")
    assert result.status == "success" and result.raw_result is not None
    pod, deployment = result.raw_result["objects"]
    refs = result.retrieval_details["evidence_refs"]
    assert [r["raw_path"] for r in refs] == ["$.objects[0]", "$.objects[1]"]
    text = refs[0]["text"]
    assert text.startswith("Pod orders/orders-7d9f8b6c5d-x2x4q: problems=[CrashLoopBackOff; OOMKilled]")
    assert "reason=OOMKilled, exit_code=137, signal=SIGKILL" in text and "\n" not in text
    assert all(value in text or value.lower() in text for value in leaf_values(pod))  # booleans: true | false
    assert deployment["kind"] == "Deployment" and deployment["problems"][0] == "0/1 ready"


async def test_an_excerpt_of_a_pods_ref_passes_the_gatekeeper_and_a_forged_exit_code_does_not(
    harness: Harness,
) -> None:
    await harness.call("query_k8s", kind="pods", namespace="orders")
    facts = [
        InvocationFacts.from_seed(i, row["tool_name"], row["retrieval_details"])
        for i, row in enumerate(harness.recorder.rows, start=1)
    ]
    catalog = default_registry().catalog()
    excerpt = "last_state=(state=terminated, reason=OOMKilled, exit_code=137"
    cited = binding("query_k8s", 1, "$.objects[0]", excerpt)
    passed = gatekeeper.check(output(claim("claim-1", "observation", cited)), facts, catalog)
    assert passed.status == "pass"
    forged = {**cited, "evidence_excerpt": excerpt.replace("137", "143")}
    failed = gatekeeper.check(output(claim("claim-1", "observation", forged)), facts, catalog)
    assert "excerpt.critical_tokens" in failed.failed_rules


async def test_events_are_filtered_and_rolled_up_to_the_workload(harness: Harness) -> None:
    result = await harness.call("query_k8s_events", object="inventory", type="Warning")
    assert result.raw_result is not None
    [event] = result.raw_result["events"]
    assert event["workload"] == "Deployment/inventory" and event["reason"] == "Unhealthy"
    text = result.retrieval_details["evidence_refs"][0]["text"]
    assert text.startswith("Warning Unhealthy inventory: object=Pod/inventory-7d9f8b6c5d-x2x4q")
    assert "message=Readiness probe failed: HTTP probe failed with statuscode: 503" in text
    old = await harness.call("query_k8s_events", namespace="catalog", until="2026-07-08T11:00:00Z")
    assert old.retrieval_details["evidence_status"] == "no_evidence"


async def test_the_rollout_history_answers_what_changed(harness: Harness) -> None:
    result = await harness.call("k8s_rollout_history", deployment="catalog")
    newest = result.retrieval_details["evidence_refs"][0]["text"]
    assert newest.startswith("catalog/catalog: revision=2, replicaset=catalog-6f7b9c8d2")
    assert "image catalog: catalog:1.4.0 → catalog:1.5.0" in newest and "current=true" in newest


async def test_an_unknown_name_is_no_evidence_that_names_the_closest(harness: Harness) -> None:
    result = await harness.call("query_k8s", name="paymnts")
    [ref] = result.retrieval_details["evidence_refs"]
    assert ref["raw_path"] == "$.no_evidence" and "closest=payments" in ref["text"]
    missing = await harness.call("k8s_rollout_history", deployment="cataloq")
    assert "closest=catalog" in missing.retrieval_details["evidence_refs"][0]["text"]


async def test_a_healthy_namespace_has_no_problem_objects(harness: Harness) -> None:
    result = await harness.call("query_k8s", namespace="shop", problems_only=True)
    assert result.retrieval_details["evidence_status"] == "no_evidence"


async def test_without_a_cluster_or_with_a_refused_kind_the_call_could_not_check(harness: Harness) -> None:
    bare = make_harness()
    result = await bare.call("query_k8s", kind="pod")
    assert result.status == "failed" and result.error is not None
    assert "no cluster source configured" in result.error
    state = await harness.backend.cluster[0].state()  # type: ignore[attr-defined]
    state.unavailable["Node"] = "forbidden by RBAC (403): nodes is forbidden"
    refused = await harness.call("query_k8s", kind="nodes")
    assert refused.status == "failed" and refused.error is not None
    assert "could not check Node objects: forbidden by RBAC (403)" in refused.error
