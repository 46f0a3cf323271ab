"""What endpoints really send back, read by the client: every reply that is not a usable completion is
a named outcome (an `LLMUnavailableError` whose `outcome` says what came back, or an `LLMOutputError`
for an empty reply), never an unhandled exception. The real `openai` client talks to FakeOpenAI."""

from __future__ import annotations

import dataclasses

import pytest

from evigate.server.agents.llm import LLMClient, LLMOutputError, LLMSettings, LLMUnavailableError
from evigate.server.agents.llm.client import LLMEndpointReplyError
from evigate.server.deadline import Deadline
from tests.support.fake_openai import Drip, FakeOpenAI, Raw, Reply, Step

MESSAGES = [{"role": "user", "content": "hello"}]
LOGIN_PAGE = "<!doctype html><html><body><form action=/login>Sign in</form></body></html>"
TRUNCATED = '{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"content": "hi'

BAD_REPLIES: dict[str, tuple[Step, str]] = {
    "an HTML page with status 200": (Raw(LOGIN_PAGE, content_type="text/html"), "not_a_completion"),
    "plain text with status 200": (Raw("OK", content_type="text/plain"), "not_a_completion"),
    "a JSON list": (Raw("[1, 2]"), "not_a_completion"),
    "truncated JSON": (Raw(TRUNCATED), "truncated_json"),
    "a 200 with an error body": (
        Raw({"error": {"message": "model is overloaded", "type": "server_error"}}),
        "error_body",
    ),
    "a completion without choices' messages": (
        Raw({"id": "x", "object": "chat.completion", "choices": [{"index": 0}]}),
        "malformed_completion",
    ),
}


@pytest.mark.parametrize("name", list(BAD_REPLIES))
async def test_a_reply_that_is_not_a_completion_is_a_named_endpoint_error(
    name: str, client: LLMClient, fake: FakeOpenAI
) -> None:
    step, outcome = BAD_REPLIES[name]
    fake.script([step])
    with pytest.raises(LLMEndpointReplyError) as caught:
        await client.chat("planner", MESSAGES, Deadline.after(5))
    assert caught.value.outcome == outcome
    assert isinstance(caught.value, LLMUnavailableError)  # the stage falls back, as for an outage
    assert len(fake.requests) == 1  # the same endpoint would send the same page again: no retry


async def test_the_error_body_message_is_kept(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Raw({"error": {"message": "model is overloaded", "type": "server_error"}})])
    with pytest.raises(LLMEndpointReplyError, match="model is overloaded"):
        await client.chat("planner", MESSAGES, Deadline.after(5))


async def test_an_html_page_is_named_with_a_preview(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Raw(LOGIN_PAGE, content_type="text/html")])
    with pytest.raises(LLMEndpointReplyError, match="Sign in"):
        await client.chat("planner", MESSAGES, Deadline.after(5))


async def test_content_null_without_tool_calls_is_an_empty_reply(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Reply(content=None)])
    with pytest.raises(LLMOutputError, match="empty reply"):
        await client.chat("planner", MESSAGES, Deadline.after(5))


async def test_a_very_slow_stream_is_a_timeout(fake: FakeOpenAI, settings: LLMSettings) -> None:
    llm = LLMClient(dataclasses.replace(settings, timeout_s=0.5, max_retries=0))
    fake.script([Drip(interval=1.0)])
    try:
        with pytest.raises(LLMUnavailableError, match="timeout after 1 attempts"):
            await llm.chat("planner", MESSAGES, Deadline.after(30))
    finally:
        await llm.aclose()
    assert fake.requests[0].outcome == "drip"
