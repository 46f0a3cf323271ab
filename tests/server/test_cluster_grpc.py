"""Kubernetes questions over gRPC, in both languages, on the generated cluster
(tests/sources/kubernetes/clusters.py) served from `--kube-dump`: each answer is PASS and states the
reason, exit code or message the cluster holds; a healthy workload is answered with nothing wrong,
an unknown pod with the closest names. Written after the cluster source: in-sample."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from evigate.server.cli import main
from evigate.v1 import chat_service_pb2, chat_service_pb2_grpc, verdict_pb2
from tests.server.conftest import AppFactory
from tests.sources.kubernetes.scenarios import write_cluster

# (question, strings the answer must hold: a value as the cluster writes it or as the answer says it)
EXIT_1, EXIT_137 = ("exit_code=1", 'exit code "1"'), ("exit_code=137", 'exit code "137"')
MAX_10 = ("max=10", 'max "10"')
QUESTIONS: list[tuple[str, tuple[str | tuple[str, ...], ...]]] = [
    ("为什么 payments 的 pod 一直重启？", ("CrashLoopBackOff", EXIT_1, "ConnectionRefusedError")),
    (
        "Why does the payments pod keep crash looping?",
        ("CrashLoopBackOff", EXIT_1, "ConnectionRefusedError"),
    ),
    ("orders 是不是内存超限了？", ("OOMKilled", EXIT_137)),
    ("Was orders OOMKilled?", ("OOMKilled", EXIT_137)),
    ("checkout 为什么拉不到镜像？", ("ImagePullBackOff", "registry.example.com/checkout:2.4.1-rc0")),
    ("Why can't checkout pull its image?", ("ImagePullBackOff", "registry.example.com/checkout:2.4.1-rc0")),
    ("search 为什么调度不上？", ("Unschedulable", "Insufficient memory")),
    ("Why is search stuck in Pending?", ("Unschedulable", "Insufficient memory")),
    ("inventory 的探针失败了吗？", ("Readiness probe failed", "503")),
    ("Is the inventory readiness probe failing?", ("Readiness probe failed", "503")),
    ("billing 为什么起不来？", ("CreateContainerConfigError", 'configmap "billing-config" not found')),
    ("Why won't billing start?", ("CreateContainerConfigError", 'configmap "billing-config" not found')),
    ("catalog 最近改了什么？回滚了吗？", ("catalog:1.4.0 → catalog:1.5.0", "LOG_LEVEL")),
    ("What changed in catalog in the last hour?", ("catalog:1.4.0 → catalog:1.5.0", "LOG_LEVEL")),
    ("nightly-report 这个 job 为什么失败了？", ("BackoffLimitExceeded",)),
    ("Why did the nightly-report job fail?", ("BackoffLimitExceeded",)),
    ("集群里有节点有压力吗？", ("worker-2", "MemoryPressure")),
    ("Is any node under pressure?", ("worker-2", "MemoryPressure")),
    ("frontend 的 HPA 扩容到上限了吗？", ("at max replicas", MAX_10)),
    ("Is the frontend HPA at its maximum?", ("at max replicas", MAX_10)),
    ("payments 命名空间里有什么问题？", ("CrashLoopBackOff",)),
    ("What is wrong in the payments namespace?", ("CrashLoopBackOff",)),
]
HEALTHY = [
    ("shop 命名空间里的 cart 有问题吗？", "zh"),
    ("Is anything wrong with cart in the shop namespace?", "en"),
]
UNKNOWN = [
    ("payment-processor-5d8f-abcde 这个 pod 怎么了？", "zh"),
    ("What is wrong with pod payment-processor-5d8f-abcde?", "en"),
]


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "world"
    (data / "logs").mkdir(parents=True)
    line = {"timestamp": "2026-07-08T11:59:00Z", "level": "INFO", "service": "cart", "message": "served"}
    (data / "logs" / "cart.log").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (data / "world.json").write_text(json.dumps({"now": "2026-07-08T12:00:00Z"}), encoding="utf-8")
    (data / "alerts.json").write_text("[]", encoding="utf-8")
    return data, write_cluster(tmp_path / "dump")


async def _ask(
    app_factory: AppFactory, world: tuple[Path, Path], questions: list[str]
) -> list[tuple[str, int, str]]:
    data, dump = world
    app = await app_factory(data_dir=data, kube_dump=dump)
    out = []
    async with grpc.aio.insecure_channel(app.address) as channel:
        chat = chat_service_pb2_grpc.ChatServiceStub(channel)
        for q in questions:
            reply = await chat.Chat(chat_service_pb2.ChatRequest(query=q), timeout=60)
            out.append((q, reply.verdict.verdict, reply.answer))
    return out


async def test_every_situation_is_answered_with_its_reason_in_both_languages(
    app_factory: AppFactory, world: tuple[Path, Path]
) -> None:
    replies = await _ask(app_factory, world, [q for q, _ in QUESTIONS])
    wrong = []
    for (question, verdict, answer), (_, expected) in zip(replies, QUESTIONS, strict=True):
        missing = [e for e in expected if not any(o in answer for o in ((e,) if isinstance(e, str) else e))]
        if verdict != verdict_pb2.VERDICT_LABEL_PASS or missing:
            wrong.append(f"{question}: verdict {verdict}, missing {missing}\n{answer}")
    assert not wrong, "\n\n".join(wrong)


async def test_a_healthy_workload_has_nothing_wrong_and_an_unknown_pod_gets_the_closest_names(
    app_factory: AppFactory, world: tuple[Path, Path]
) -> None:
    replies = await _ask(app_factory, world, [q for q, _ in HEALTHY + UNKNOWN])
    for question, verdict, answer in replies[: len(HEALTHY)]:
        assert verdict == verdict_pb2.VERDICT_LABEL_PASS, answer
        assert "problems=[]" in answer or 'problems "[]"' in answer, question
        assert "CrashLoopBackOff" not in answer and not answer.startswith(("Yes", "是的")), question
    for question, verdict, answer in replies[len(HEALTHY) :]:
        assert verdict == verdict_pb2.VERDICT_LABEL_PASS, answer
        assert "payments" in answer and "payment-processor-5d8f-abcde" in answer, question


async def test_the_cluster_is_a_grpc_health_entry(app_factory: AppFactory, world: tuple[Path, Path]) -> None:
    data, dump = world
    app = await app_factory(data_dir=data, kube_dump=dump)
    async with grpc.aio.insecure_channel(app.address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="evigate.source.kubernetes"), timeout=5
        )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_evigate_sources_lists_the_cluster(
    world: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, dump = world
    assert main(["sources", "--data-dir", str(data), "--kube-dump", str(dump)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line == f"kubernetes {dump}: ready; version unknown; 13 pods, 2 nodes, 10 namespaces, 46 objects"


async def test_a_pods_log_lines_are_evidence_like_any_log(
    app_factory: AppFactory, world: tuple[Path, Path]
) -> None:
    """No log file holds payments: its lines come from the dump's logs.txt through the log reader."""
    questions = ["payments 的日志里有什么错误？", "What errors are in the payments logs?"]
    for question, verdict, answer in await _ask(app_factory, world, questions):
        assert verdict == verdict_pb2.VERDICT_LABEL_PASS, answer
        # the line as query_logs cites it (time, level, service), not the pod's log tail in query_k8s
        assert "2026-07-08 11:58:02 ERROR payments cannot connect to ledger-db:5432" in answer, question
