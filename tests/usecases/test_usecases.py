"""The use cases against a fake of their port (the session store): Check, SubmitFeedback, GetTrace
and ListSessions, with no database and no pipeline behind them."""

from __future__ import annotations

import pytest

from evigate.server.usecases.check import CheckUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.records import SessionNotFound, TraceRecord
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.usecases.trace_cache import TraceCache
from tests.rules.session import CPU_EXCERPT, binding, claim, output
from tests.support.tool_table import rule_catalog
from tests.usecases.fake_store import FakeStore, invocation, session

CPU_REF = {"raw_path": "$.alerts[0]", "text": CPU_EXCERPT}


def _store() -> FakeStore:
    store = FakeStore()
    store.sessions["s-1"] = session("s-1")
    store.invocations["s-1"] = [invocation(7, "s-1", "query_metrics", [CPU_REF])]
    return store


async def test_check_judges_an_outside_output_against_the_sessions_calls() -> None:
    check = CheckUseCase(_store(), rule_catalog())
    cited = binding("query_metrics", 7, "$.alerts[0]", CPU_EXCERPT)
    passed = await check.check("s-1", lambda: output(claim("claim-1", "observation", cited)))
    assert (passed["status"], passed["severity"]) == ("pass", "none")
    forged = {**cited, "evidence_excerpt": CPU_EXCERPT.replace("92%", "99%")}
    refused = await check.check("s-1", lambda: output(claim("claim-1", "observation", forged)))
    assert refused["status"] == "fail"


async def test_check_of_an_unknown_session_is_not_found_before_the_evidence_is_built() -> None:
    built: list[bool] = []

    def evidence() -> dict[str, object]:
        built.append(True)
        return {}

    with pytest.raises(SessionNotFound):
        await CheckUseCase(_store(), rule_catalog()).check("absent", evidence)
    assert not built


async def test_useful_feedback_makes_one_case_and_drops_the_cached_trace() -> None:
    store, dropped = _store(), list[str]()
    feedback = FeedbackUseCase(store, invalidate=dropped.append)
    first = await feedback.submit("s-1", "useful", "spot on")
    again = await feedback.submit("s-1", "useful")
    assert first.case_id is not None and again.case_id == first.case_id
    assert store.notes == {"s-1": ("useful", "spot on")}  # a feedback without a note keeps the last
    assert (await feedback.submit("s-1", "not_useful")).case_id is None
    assert dropped == ["s-1", "s-1", "s-1"]


async def test_trace_reads_a_finished_session_once_through_the_cache() -> None:
    store = _store()
    trace, cache = TraceUseCase(store), TraceCache[TraceRecord](ttl_s=60.0)
    first = await trace.get("s-1", lambda record: record, cache)
    second = await trace.get("s-1", lambda record: record, cache)
    assert first is second and store.trace_reads == 1
    with pytest.raises(SessionNotFound):
        await trace.get("absent", lambda record: record)


async def test_list_sessions_pages_newest_first() -> None:
    store = FakeStore()
    for n in range(3):
        store.sessions[f"s-{n}"] = session(f"s-{n}")
    page, token = await TraceUseCase(store).list_sessions(None, None, 2, None)
    assert [s.session_id for s in page] == ["s-2", "s-1"] and token is not None
    rest, end = await TraceUseCase(store).list_sessions(None, None, 2, token)
    assert [s.session_id for s in rest] == ["s-0"] and end is None
