"""The cluster calls a question asks for: a pod stands for its workload, "the payments namespace"
is a namespace, Kubernetes words in both languages, what changed → the rollout history, a
pod-shaped name the cluster lacks is asked for (so the answer names the closest names)."""

from __future__ import annotations

import pytest

from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.cluster_calls import merged, plan, topics
from evigate.server.sources.kubernetes.dump import read_dump
from evigate.server.sources.kubernetes.names import ClusterNames, cluster_names
from tests.sources.kubernetes.scenarios import write_cluster


@pytest.fixture(scope="module")
def names(tmp_path_factory: pytest.TempPathFactory) -> ClusterNames:
    return cluster_names(read_dump(write_cluster(tmp_path_factory.mktemp("cluster") / "dump")))


def _calls(question: str, names: ClusterNames) -> list[tuple[str, dict[str, object]]]:
    return [(c.tool_name, c.arguments) for c in plan(question, names)]


def test_a_pod_stands_for_its_workload(names: ClusterNames) -> None:
    assert _calls("payments-7d9f8b6c5d-x2x4q 怎么了？", names) == [
        ("query_k8s", {"name": "payments", "namespace": "payments"}),
        ("query_k8s_events", {"object": "payments", "namespace": "payments"}),
    ]


def test_the_payments_namespace_is_a_namespace(names: ClusterNames) -> None:
    assert _calls("What is wrong in the payments namespace?", names) == [
        ("query_k8s", {"namespace": "payments", "problems_only": True}),
        ("query_k8s_events", {"namespace": "payments", "type": "Warning"}),
    ]


@pytest.mark.parametrize(
    ("zh", "en", "topic"),
    [
        ("为什么一直重启", "why does it crash loop", "crash"),
        ("为什么拉不到镜像", "image pull failing", "image"),
        ("为什么调度不上", "stuck in Pending", "pending"),
        ("是不是内存超限", "was it OOMKilled", "memory"),
        ("探针失败了吗", "is the probe failing", "probe"),
        ("回滚了吗", "what changed", "change"),
    ],
)
def test_kubernetes_words_in_both_languages(zh: str, en: str, topic: str) -> None:
    assert topic in topics(zh) and topic in topics(en)


def test_what_changed_asks_for_the_rollout_history(names: ClusterNames) -> None:
    calls = _calls("catalog 回滚了吗？", names)
    assert ("k8s_rollout_history", {"deployment": "catalog", "namespace": "catalog"}) in calls
    assert not any(tool == "k8s_rollout_history" for tool, _ in _calls("catalog 怎么了？", names))


def test_an_unknown_pod_is_asked_for_and_not_looked_up_as_a_service(names: ClusterNames) -> None:
    assert _calls("What is wrong with pod payment-processor-5d8f-abcde?", names) == [
        ("query_k8s", {"name": "payment-processor-5d8f-abcde"})
    ]
    lookup = PlannedCall("list_services", {"name": "payments"}, "payments", purpose="catalog")
    cluster = plan("payments 怎么了？", names)
    assert merged([lookup], cluster, names) == cluster


def test_nothing_without_a_cluster_or_a_kubernetes_subject(names: ClusterNames) -> None:
    assert plan("payments 怎么了？", None) == []
    assert plan("order-service 的错误日志", names) == []
