"""The scripted server itself: what other suites rely on (concurrency, clean shutdown, recording)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import urllib.error
import urllib.request

import pytest

from evigate.server.agents.llm import LLMClient, LLMSettings, LLMUnavailableError
from evigate.server.deadline import Deadline
from tests.support.fake_openai import Error, FakeOpenAI, Hang, RecordedRequest, Reply, Step, reply

MESSAGES = [{"role": "user", "content": "hi"}]


def _post(url: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_protocol_shape_and_recording() -> None:
    with FakeOpenAI() as fake:
        fake.script([reply("a"), Reply(tool_calls=())])
        status, body = _post(fake.base_url + "/chat/completions", {"model": "m", "messages": MESSAGES})
        assert status == 200
        assert body["object"] == "chat.completion"
        assert body["model"] == "m"
        assert body["choices"] == [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "a"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ]
        assert body["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        status, body = _post(fake.base_url + "/embeddings", {})
        assert status == 404
        assert [(r.index, r.path, r.outcome) for r in fake.requests] == [
            (0, "/v1/chat/completions", "reply"),
            (1, "/v1/embeddings", "not found"),
        ]
        assert fake.pending == 1


async def test_concurrent_requests_overlap(settings: LLMSettings) -> None:
    calls = 50

    def when_all_arrived(request: RecordedRequest) -> Step:
        """Held until every call has arrived: only calls in flight together can all be answered."""
        together = fake.wait_for_requests(calls, timeout=30)
        return Reply(content="together") if together else Error(500)

    with FakeOpenAI(default=when_all_arrived) as fake:
        llm = LLMClient(dataclasses.replace(settings, base_url=fake.base_url, max_retries=0))
        try:
            replies = await asyncio.gather(
                *(llm.chat("executor", MESSAGES, Deadline.after(60)) for _ in range(calls))
            )
        finally:
            await llm.aclose()
    assert [r.content for r in replies] == ["together"] * calls
    assert len(fake.requests) == calls


async def test_stop_ends_hangs(settings: LLMSettings) -> None:
    fake = FakeOpenAI().start()
    llm = LLMClient(dataclasses.replace(settings, base_url=fake.base_url, max_retries=0))
    fake.script([Hang()])
    call = asyncio.create_task(llm.chat("planner", MESSAGES, Deadline.after(10)))
    assert await asyncio.to_thread(fake.wait_for_requests, 1, 2.0)
    threads_before = threading.active_count()
    await asyncio.to_thread(fake.stop)  # returns at all only if it ended the hang
    with pytest.raises(LLMUnavailableError):
        await call
    await llm.aclose()
    assert threading.active_count() < threads_before
    with pytest.raises(RuntimeError):
        _ = fake.base_url


async def test_cancellation_drops_the_request(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Hang()])
    call = asyncio.create_task(client.chat("executor", MESSAGES, Deadline.after(10)))
    assert await asyncio.to_thread(fake.wait_for_requests, 1, 2.0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.to_thread(fake.requests[0].wait_disconnected, 2.0)
