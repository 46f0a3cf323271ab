"""Structured cases and the LLM opinion as a user sees them: `evigate trace` shows the opinion and
the case's fields, `evigate cases` lists cases by structure, `evigate cases-backfill` structures
the GENERAL cases once (tests/pipeline/test_case_backfill.py), and disagreements reach the
metrics."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evigate.server.deadline import Deadline
from tests.server.conftest import AppFactory, ServerProcess
from tests.server.test_cli import evigate
from tests.support.fake_openai import FakeOpenAI, json_reply
from tests.support.waiting import until

POOL_QUESTION = "Does order-service have HikariCP pool-exhaustion logs?"
OPINION = {
    name: {"value": name != "has_solution", "reason": f"scripted reason for {name}"}
    for name in ("has_root_cause", "has_solution", "answers_the_question", "states_only_verified_facts")
}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=json_reply(OPINION)) as server:
        yield server


def test_trace_shows_the_opinion_and_the_case_and_cases_lists_it(
    server_process: Callable[..., ServerProcess], fake: FakeOpenAI
) -> None:
    server = server_process(
        env={
            "EVIGATE_EVALUATION_LLM_MODEL": "evaluator",
            "EVIGATE_EVALUATION_LLM_BASE_URL": fake.base_url,
            "EVIGATE_LLM_JSON_MODE": "json_object",
        }
    )
    chat = evigate("chat", POOL_QUESTION, "--json", server=server, token=None)
    assert chat.returncode == 0, chat.stderr
    session_id = json.loads(chat.stdout)["session_id"]
    until(lambda: len(fake.requests) >= 1, within=20, what="the opinion was asked")

    def traced() -> str:
        return evigate("trace", session_id, server=server, token=None).stdout

    until(lambda: "llm opinion" in traced(), within=20, what="the opinion is in the trace")
    useful = evigate("feedback", session_id, "useful", server=server, token=None)
    assert useful.returncode == 0, useful.stderr
    shown = traced()
    for expected in (
        "llm opinion (",
        "has_solution: no — scripted reason for has_solution",
        "states_only_verified_facts: yes",
        "fault category: connection-pool",
        "error code: java.sql.SQLTransientConnectionException",
        "services: order-service",
    ):
        assert expected in shown, shown
    # The opinion's factors are not listed among the score's: they carry no points.
    assert "llm_has_root_cause" not in shown

    listed = evigate(
        "cases",
        "--category",
        "connection-pool",
        "--service",
        "order-service",
        "--json",
        server=server,
        token=None,
    )
    assert listed.returncode == 0, listed.stderr
    (case,) = json.loads(listed.stdout)["cases"]
    assert case["error_code"] == "java.sql.SQLTransientConnectionException"
    assert case["session_id"] == session_id
    none = evigate("cases", "--category", "disk-full", "--json", server=server, token=None)
    assert json.loads(none.stdout).get("cases", []) == []
    readable = evigate("cases", server=server, token=None)
    assert "connection-pool" in readable.stdout and "order-service" in readable.stdout


async def test_disagreements_are_counted_in_the_metrics(
    app_factory: AppFactory, fake: FakeOpenAI, tmp_path: Path
) -> None:
    """Workers off, so the test marks the session (as the answer check would) before the opinion
    job runs; the opinion's `true` is then a disagreement, counted once."""
    app = await app_factory(
        evaluation_llm_model="evaluator",
        evaluation_llm_base_url=fake.base_url,
        llm_json_mode="json_object",
        worker_enabled=False,
    )
    assert app.pipeline is not None and app.opinions is not None and app.database is not None
    result = await app.pipeline.run(POOL_QUESTION, None, "en", Deadline.after(30))
    repo = app.database.repo
    session = await repo.get_session(result.session_id)
    assert session is not None
    extras: dict[str, Any] = {**(session.extras or {}), "answer_check": {"rejections": [{"attempt": 1}]}}

    async def mark(conn: Any) -> None:
        from evigate.storage.rows import SESSION

        await conn.execute(
            SESSION.update().where(SESSION.c.session_id == result.session_id).values(extras=extras)
        )

    await repo._runner.write(mark)
    assert await app.opinions.run_once() == 1
    sample = app.metrics.registry.get_sample_value(
        "evigate_llm_opinion_disagreements_total", {"item": "states_only_verified_facts"}
    )
    assert sample == 1.0
