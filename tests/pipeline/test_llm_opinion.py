"""The LLM opinion beside the rule score, through a scripted OpenAI-compatible server on 127.0.0.1:
a valid opinion is stored with its delta-0 factors and leaves the evidence score as it is; a
malformed one and a timed-out one leave the field empty and say why in the job record; a
`states_only_verified_facts = true` that code contradicts is recorded as a disagreement."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from evigate.rules.opinion import ITEMS
from evigate.server.agents.llm.opinion import LLMOpinionAgent
from evigate.server.deadline import Deadline
from evigate.server.opinion_worker import opinion_worker
from evigate.server.settings import Settings
from evigate.server.usecases.opinion import OpinionJob
from evigate.server.worker import EvaluationWorker, WorkerSettings, evaluate_session
from evigate.storage import Database
from evigate.storage.opinions import LLM_OPINION
from evigate.storage.rows import JOB
from tests.pipeline.conftest import BuildPipeline
from tests.support.fake_openai import FakeOpenAI, Hang, RecordedRequest, Reply, json_reply

JSON = dict[str, Any]
QUESTION = "Does payment-service have a HighCPUUsage alert right now?"
FAST = WorkerSettings(poll_interval=0.05, lease_seconds=30, max_attempts=2, retry_delay_seconds=0.0)


def opinion(verified_only: bool = True) -> JSON:
    values = {"has_root_cause": False, "has_solution": False, "answers_the_question": True}
    values["states_only_verified_facts"] = verified_only
    return {
        name: {"value": value, "reason": f"{name} because the answer says so"}
        for name, value in values.items()
    }


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def agent(fake: FakeOpenAI, timeout_s: float = 5.0) -> LLMOpinionAgent:
    return LLMOpinionAgent.from_settings(
        fake.base_url, "sk-test", "evaluator", timeout_s, "json_object", max_retries=0, backoff_base=0.0
    )


async def finished_session(db: Database, build_pipeline: BuildPipeline, opinion_jobs: bool) -> str:
    db.repo.opinion_jobs = opinion_jobs
    result = await build_pipeline().run(QUESTION, None, "en", Deadline.after(30))
    assert result.status == "SUCCESS"
    return result.session_id


async def run_jobs(db: Database, job: OpinionJob, times: int = 1) -> None:
    worker = EvaluationWorker(db.repo, FAST, kind=LLM_OPINION, run=job.run)
    for _ in range(times):
        await worker.run_once()


async def opinion_job_rows(db: Database, session_id: str) -> list[Any]:
    async def work(conn: Any) -> list[Any]:
        rows = await conn.execute(
            JOB.select().where(JOB.c.session_id == session_id, JOB.c.kind == LLM_OPINION)
        )
        return list(rows)

    return await db.repo._runner.read(work)


async def test_valid_opinion_is_stored_and_the_score_is_untouched(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI
) -> None:
    fake.script([json_reply(opinion())])
    with_opinion = await finished_session(db, build_pipeline, opinion_jobs=True)
    without = await finished_session(db, build_pipeline, opinion_jobs=False)
    assert len(await opinion_job_rows(db, without)) == 0  # not configured: no job, no opinion
    counted: list[str] = []
    agent_ = agent(fake)
    try:
        await run_jobs(db, OpinionJob(db.repo, agent_, counted.append))  # before the score: kept by it
    finally:
        await agent_.aclose()
    for session_id in (with_opinion, without):
        await evaluate_session(db.repo, session_id)
    stored = [(await db.repo.get_session(s)).self_evaluation for s in (with_opinion, without)]  # type: ignore[union-attr]
    scored, plain = stored[0] or {}, stored[1] or {}
    assert scored["evidence_score"] == plain["evidence_score"]
    rule = [f for f in scored["factors"] if f.get("source") != "llm"]
    assert rule == plain["factors"]
    assert sum(f["delta"] for f in rule) == scored["evidence_score"]
    llm = [f for f in scored["factors"] if f.get("source") == "llm"]
    assert [f["name"] for f in llm] == [f"llm_{item}" for item in ITEMS]
    assert all(f["delta"] == 0 for f in llm)
    got = scored["llm_opinion"]
    assert {item: got[item]["value"] for item in ITEMS} == {k: v["value"] for k, v in opinion().items()}
    assert got["prompt_version"] == "evaluator-v1" and got["model"]
    assert got["disagreements"] == [] and counted == []
    assert plain.get("llm_opinion") is None
    # The model saw the question, the answer and the verified claims.
    sent = json.dumps(fake.requests[0].messages, ensure_ascii=False)
    assert QUESTION in sent and "HighCPUUsage" in sent
    assert [row.status for row in await opinion_job_rows(db, with_opinion)] == ["done"]


@pytest.mark.parametrize(
    ("step", "error"),
    [
        (json_reply({"has_root_cause": {"value": "yes"}}), "OpinionFormatError"),
        (Reply(content="I think it is fine."), "LLMOutputError"),
        (Hang(), "timeout"),
    ],
    ids=["malformed-items", "not-json", "timeout"],
)
async def test_failed_opinion_leaves_the_field_empty_and_the_job_says_why(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI, step: Any, error: str
) -> None:
    fake.script([step, step])
    session_id = await finished_session(db, build_pipeline, opinion_jobs=True)
    agent_ = agent(fake, timeout_s=0.3)
    try:
        await run_jobs(db, OpinionJob(db.repo, agent_), times=3)
    finally:
        await agent_.aclose()
    (row,) = await opinion_job_rows(db, session_id)
    assert row.status == "failed" and row.attempts == FAST.max_attempts
    assert error.lower() in (row.last_error or "").lower()
    session = await db.repo.get_session(session_id)
    assert session is not None and (session.self_evaluation or {}).get("llm_opinion") is None


async def test_a_contradicted_verified_only_opinion_is_a_disagreement(
    db: Database, build_pipeline: BuildPipeline, fake: FakeOpenAI
) -> None:
    """The answer check refused a Composer text of this session: code says the answer did not
    state only verified facts, so the model's `true` is recorded and not believed."""
    session_id = await finished_session(db, build_pipeline, opinion_jobs=True)
    session = await db.repo.get_session(session_id)
    assert session is not None
    extras = dict(session.extras or {})
    extras["answer_check"] = {
        **(extras.get("answer_check") or {}),
        "rejections": [{"attempt": 1, "violations": [{"rule_id": "answer.unverified_number"}]}],
    }

    async def mark(conn: Any) -> None:
        from evigate.storage.rows import SESSION

        await conn.execute(SESSION.update().where(SESSION.c.session_id == session_id).values(extras=extras))

    await db.repo._runner.write(mark)

    def respond(request: RecordedRequest) -> Reply:
        return json_reply(opinion(verified_only=True))

    fake.script([respond])
    counted: list[str] = []
    agent_ = agent(fake)
    try:
        await run_jobs(db, OpinionJob(db.repo, agent_, counted.append))
    finally:
        await agent_.aclose()
    stored = (await db.repo.get_session(session_id)).self_evaluation or {}  # type: ignore[union-attr]
    got = stored["llm_opinion"]
    assert got["states_only_verified_facts"]["believed"] is False
    (disagreement,) = got["disagreements"]
    assert disagreement["item"] == "states_only_verified_facts" and disagreement["opinion"] is True
    assert any("answer check refused" in mark for mark in disagreement["code_marks"])
    assert counted == ["states_only_verified_facts"]
    factor = next(f for f in stored["factors"] if f["name"] == "llm_states_only_verified_facts")
    assert "not believed" in factor["description"] and factor["delta"] == 0


async def test_the_opinion_workers_http_client_is_closed_at_stop(db: Database, fake: FakeOpenAI) -> None:
    settings = Settings.of(
        evaluation_llm_model="evaluator",
        evaluation_llm_base_url=fake.base_url,
        evaluation_llm_api_key="sk-test",
    )
    worker = opinion_worker(settings, db.repo, name="test/opinion")
    assert worker is not None
    close: Any = worker._close  # the agent's aclose
    client = close.__self__._client._openai  # the agent's pooled HTTP client
    worker.start()
    assert not client.is_closed()
    await worker.stop()
    assert client.is_closed()
    await worker.stop()  # a second stop is harmless
