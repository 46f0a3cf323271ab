"""Cases are found by their structure: after useful feedback structures a case, a new question
naming the same error code on the same service finds it at L0, first; the same code on another
service of the case library does not find it; a bare HTTP status finds it only with the case's
service."""

from __future__ import annotations

from typing import Any

import pytest

from evigate.rules.case_facts import load_fault_catalog
from evigate.server.deadline import Deadline
from evigate.server.queries.types import KnowledgeQuery
from evigate.server.sources.retrieval.factory import build_knowledge
from evigate.server.sources.retrieval.store import MemoryVectorStore
from evigate.server.tools import build_backend, knowledge_dir
from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.storage import Database
from tests.pipeline.conftest import BuildPipeline

OTHER_CASES = (
    "Does payment-service have a HighCPUUsage alert right now?",
    "user-service 有 OutOfMemoryError 日志吗？",
)


async def useful_case(db: Database, build_pipeline: BuildPipeline, question: str) -> str:
    result = await build_pipeline().run(question, None, "en", Deadline.after(30))
    feedback = FeedbackUseCase(db.repo, None, CaseUseCase(db.repo, load_fault_catalog()))
    case_id = (await feedback.submit(result.session_id, "useful")).case_id
    assert case_id is not None
    return case_id


async def lookup(db: Database, query: str) -> Any:
    return await build_backend(None, db.repo).lookup_knowledge(KnowledgeQuery(query, 5))


@pytest.mark.parametrize(
    ("question", "same", "other_service"),
    [
        (
            "Does order-service have HikariCP pool-exhaustion logs?",
            "order-service 又报 SQLTransientConnectionException 了，怎么处理？",
            "payment-service 报 SQLTransientConnectionException 怎么办？",
        ),
        (
            "gateway 有 502 错误日志吗？",
            "gateway keeps returning 502 to clients, what should I do?",
            "user-service returns 502 sometimes, why?",
        ),
    ],
    ids=["exception-class", "http-status"],
)
async def test_same_error_code_on_the_same_service_finds_the_case_at_l0(
    db: Database, build_pipeline: BuildPipeline, question: str, same: str, other_service: str
) -> None:
    # Cases of other services: the library knows payment-service and user-service.
    for background in OTHER_CASES:
        await useful_case(db, build_pipeline, background)
    case_id = await useful_case(db, build_pipeline, question)
    case = await db.repo.get_case(case_id)
    assert case is not None and case.error_code and case.services

    hits = await lookup(db, same)
    assert hits.match_level == "L0"
    first = hits.blocks[0]
    assert first["kind"] == "case" and first["case_id"] == case_id
    assert first["error_code"] == case.error_code and case.services[0] in first["services"]

    elsewhere = await lookup(db, other_service)
    assert case_id not in [b.get("case_id") for b in elsewhere.blocks]


async def test_the_served_hybrid_search_applies_the_same_structure(
    db: Database, build_pipeline: BuildPipeline
) -> None:
    """The service searches through SemanticKnowledge (server.sources.retrieval), here with BM25
    alone: the structured case is found at L0 first on its service, and not for another service."""
    for background in OTHER_CASES:
        await useful_case(db, build_pipeline, background)
    case_id = await useful_case(db, build_pipeline, "Does order-service have HikariCP pool-exhaustion logs?")
    case = await db.repo.get_case(case_id)
    assert case is not None and case.error_code

    search = build_knowledge(knowledge_dir(None), None, MemoryVectorStore())
    backend = build_backend(None, db.repo, knowledge=search)
    hits = await backend.lookup_knowledge(
        KnowledgeQuery("order-service 又报 SQLTransientConnectionException 了，怎么处理？", 5)
    )
    assert hits.match_level == "L0"
    assert hits.blocks[0]["case_id"] == case_id and hits.blocks[0]["error_code"] == case.error_code
    elsewhere = await backend.lookup_knowledge(
        KnowledgeQuery("payment-service 报 SQLTransientConnectionException 怎么办？", 5)
    )
    assert case_id not in [b.get("case_id") for b in elsewhere.blocks]
