"""Questions in Chinese and English answered end to end (offline agents, real storage) with the logs
in ClickHouse: the same verdicts, claims and cited facts as from the files, and the calls say that
the server did the filtering."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from evigate.rules.enums import CallStatus
from evigate.server.agents.offline import build_offline_backend
from evigate.server.deadline import Deadline
from evigate.server.pipeline import Pipeline
from evigate.server.pipeline.orchestrator import PipelineSettings
from evigate.server.skills import load_skills
from evigate.server.sources.clickhouse.source import ClickHouseLogs
from evigate.server.sources.source_set import SourceSet
from evigate.server.tools import build_backend
from evigate.server.tools.registry import default_registry
from evigate.storage import Database
from tests.pipeline.test_demo_questions import CASES, Case, answers_the_case

from .conftest import Loaded, source

ASKED = ("user-oom-zh", "order-hikari-en", "payment-oom-zh", "gateway-502-en")


def _pipeline(db: Database, tools: SourceSet) -> Pipeline:
    agents = build_offline_backend(catalog=tools.services)
    settings = PipelineSettings(max_rounds=2, owner="tests")
    return Pipeline(db.repo, tools, agents, load_skills(), default_registry().catalog(), settings)


@pytest.fixture
async def logs(clickhouse: Loaded) -> AsyncIterator[ClickHouseLogs]:
    source_ = source(clickhouse.server)
    yield source_
    await source_.aclose()


@pytest.mark.parametrize("case", [c for c in CASES if c.id in ASKED], ids=lambda c: c.id)
async def test_a_question_is_answered_the_same_from_clickhouse(
    db: Database, logs: ClickHouseLogs, case: Case
) -> None:
    files = build_backend(None, db.repo)
    answers = []
    calls = []
    for tools in (files, replace(files, logs=(logs,))):  # the same set, its logs from ClickHouse
        result = await _pipeline(db, tools).run(case.query, None, case.language, Deadline.after(30))
        trace = await db.repo.get_trace(result.session_id)
        assert trace is not None and result.verdict is not None and result.evidence is not None
        assert answers_the_case(case, result, trace.invocations)
        claims = result.evidence["claims"]
        cited = [(c["claim_type"], c["evidence_bindings"][0]["raw_path"]) for c in claims]
        answers.append((result.verdict["verdict"], cited))
        calls = [inv for inv in trace.invocations if inv.tool_name == "query_logs"]
    assert answers[0] == answers[1]
    assert calls and all(inv.status == CallStatus.SUCCESS for inv in calls)
    for inv in calls:
        raw = inv.raw_result or {}
        if raw.get("logs"):  # a call that found lines says who filtered them
            assert raw["source"] == "clickhouse"
            assert "service" in raw["pushed_down"]
