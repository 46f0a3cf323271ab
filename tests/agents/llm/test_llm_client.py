"""LLMClient against the scripted server, through the real openai client over HTTP."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging

import pytest

from evigate.server.agents.llm import (
    LLMClient,
    LLMOutputError,
    LLMSettings,
    LLMUnavailableError,
    extract_json,
)
from evigate.server.agents.llm.budget import shared_tools
from evigate.server.deadline import Deadline, DeadlineExceeded
from tests.support.fake_openai import Disconnect, Error, FakeOpenAI, Hang, Raw, reply
from tests.support.waiting import SLACK

MESSAGES = [{"role": "user", "content": "hello"}]
SCHEMA = {"type": "object"}
# Timers may fire this much before their instant (clock granularity); a lower bound only.
CLOCK_TOLERANCE_S = 0.01


async def test_reply_content_usage_and_stage_model(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([reply("hi there")])
    result = await client.chat("executor", MESSAGES, Deadline.after(5))
    assert result.content == "hi there"
    assert result.attempts == 1
    assert result.usage["total_tokens"] == 15
    [request] = fake.requests
    assert request.model == "test-executor"  # the stage's own model
    assert request.body["temperature"] == 0.0
    assert request.body["max_tokens"] == 2048
    assert request.messages == MESSAGES


async def test_other_stages_use_the_default_model(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([reply("{}")])
    await client.chat("verifier", MESSAGES, Deadline.after(5))
    assert fake.requests[0].model == "test-model"


async def test_429_then_success_is_retried(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Error(429, "slow down", type="rate_limit_exceeded"), reply("ok")])
    result = await client.chat("planner", MESSAGES, Deadline.after(5))
    assert result.content == "ok"
    assert result.attempts == 2
    assert [r.outcome for r in fake.requests] == ["error 429", "reply"]
    # the openai client's own retries are off: every attempt is ours
    assert [r.headers["x-stainless-retry-count"] for r in fake.requests] == ["0", "0"]


@pytest.mark.parametrize("status", [500, 502, 503, 429])
async def test_retryable_errors_exhausted(client: LLMClient, fake: FakeOpenAI, status: int) -> None:
    fake.script([Error(status)] * 10)
    with pytest.raises(LLMUnavailableError) as info:
        await client.chat("planner", MESSAGES, Deadline.after(5))
    assert info.value.attempts == 4  # 1 + max_retries
    assert info.value.status == status
    assert len(fake.requests) == 4
    assert fake.pending == 6


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_client_errors_are_not_retried(client: LLMClient, fake: FakeOpenAI, status: int) -> None:
    fake.script([Error(status, "nope", type="invalid_request_error"), reply("never")])
    with pytest.raises(LLMUnavailableError, match="nope") as info:
        await client.chat("planner", MESSAGES, Deadline.after(5))
    assert info.value.status == status
    assert len(fake.requests) == 1


async def test_connection_close_is_retried(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Disconnect(), reply("back")])
    result = await client.chat("composer", MESSAGES, Deadline.after(5))
    assert result.content == "back"
    assert len(fake.requests) == 2


async def test_backoff_grows_and_honours_retry_after(fake: FakeOpenAI, settings: LLMSettings) -> None:
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    cfg = dataclasses.replace(settings, backoff_base=0.1, backoff_max=1.0, max_retries=4)
    llm = LLMClient(cfg, sleep=record, jitter=lambda: 1.0)
    fake.script([Error(500), Error(500), Error(500), Error(429, headers={"retry-after": "0.9"}), reply("ok")])
    try:
        await llm.chat("planner", MESSAGES, Deadline.after(5))
    finally:
        await llm.aclose()
    assert sleeps == pytest.approx([0.1, 0.2, 0.4, 0.9])


async def test_hanging_endpoint_ends_at_the_deadline(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Hang()])
    deadline = Deadline.after(0.5)
    with pytest.raises(DeadlineExceeded):
        await client.chat("executor", MESSAGES, deadline)
    [request] = fake.requests
    # the per-request timeout was capped by the deadline, not the 5 s of the settings
    assert float(request.headers["x-stainless-read-timeout"]) <= 0.5
    # and the client really went away (the server saw the disconnect), not before the deadline
    assert await asyncio.to_thread(request.wait_disconnected, 10.0)
    assert deadline.at is not None and request.disconnected_at is not None
    assert request.disconnected_at >= deadline.at - CLOCK_TOLERANCE_S


async def test_request_timeout_below_the_deadline_is_retried(fake: FakeOpenAI, settings: LLMSettings) -> None:
    # the second attempt's reply must arrive within the same timeout, on a busy machine too
    timeout = 0.25 * SLACK
    llm = LLMClient(dataclasses.replace(settings, timeout_s=timeout))
    fake.script([Hang(), reply("second try")])
    try:
        result = await llm.chat("planner", MESSAGES, Deadline.after(30))
    finally:
        await llm.aclose()
    assert result.content == "second try"
    assert result.attempts == 2
    first, _ = fake.requests
    # the first attempt ended at its own timeout, not at the call's 30 s deadline
    assert float(first.headers["x-stainless-read-timeout"]) <= timeout
    assert await asyncio.to_thread(first.wait_disconnected, 10.0)


@pytest.mark.slow  # waits out every attempt's timeout
async def test_every_attempt_hangs_until_the_deadline(fake: FakeOpenAI, settings: LLMSettings) -> None:
    llm = LLMClient(dataclasses.replace(settings, timeout_s=0.2, max_retries=50))
    fake.script([Hang()] * 50)
    # room for several 0.2 s attempts even when a busy machine delays each connection
    deadline = Deadline.after(1.5 * SLACK)
    try:
        with pytest.raises(DeadlineExceeded):
            await llm.chat("planner", MESSAGES, deadline)
    finally:
        await llm.aclose()
    requests = fake.requests
    assert len(requests) >= 2  # retried while time was left
    assert deadline.at is not None
    for request in requests:  # each attempt within its timeout, none sent after the deadline
        assert float(request.headers["x-stainless-read-timeout"]) <= 0.2
        assert request.received_at < deadline.at


async def test_expired_deadline_sends_nothing(client: LLMClient, fake: FakeOpenAI) -> None:
    with pytest.raises(DeadlineExceeded):
        await client.chat("planner", MESSAGES, Deadline.after(0))
    assert fake.requests == []


async def test_no_retry_when_the_backoff_would_pass_the_deadline(
    fake: FakeOpenAI, settings: LLMSettings
) -> None:
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    llm = LLMClient(dataclasses.replace(settings, backoff_base=5.0, backoff_max=5.0), sleep=record)
    fake.script([Error(503), reply("too late")])
    try:
        with pytest.raises(DeadlineExceeded, match="no time left"):
            await llm.chat("planner", MESSAGES, Deadline.after(1.0))
    finally:
        await llm.aclose()
    assert sleeps == []  # gave up at once instead of sleeping into the deadline
    assert len(fake.requests) == 1


async def test_no_choices_is_an_output_error(client: LLMClient, fake: FakeOpenAI) -> None:
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    fake.script([Raw(body)])
    with pytest.raises(LLMOutputError, match="no choices"):
        await client.chat("planner", MESSAGES, Deadline.after(5))


async def test_a_responder_can_answer_from_the_request(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([lambda request: reply(f"you said {request.messages[-1]['content']}")])
    result = await client.chat("planner", MESSAGES, Deadline.none())
    assert result.content == "you said hello"


async def test_unscripted_request_fails_loudly(client: LLMClient, fake: FakeOpenAI) -> None:
    with pytest.raises(LLMUnavailableError, match="no scripted response"):
        await client.chat("planner", MESSAGES, Deadline.after(5))
    assert len(fake.requests) == 1


# -- structured output -----------------------------------------------------------------------------
async def test_auto_mode_uses_json_schema(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([reply('{"verdict": "PASS"}')])
    data, _ = await client.chat_json("verifier", MESSAGES, Deadline.after(5), schema_name="v", schema=SCHEMA)
    assert data == {"verdict": "PASS"}
    fmt = fake.requests[0].response_format
    assert fmt is not None
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "v"
    assert fmt["json_schema"]["schema"] == SCHEMA


async def test_auto_mode_falls_back_and_remembers(client: LLMClient, fake: FakeOpenAI) -> None:
    unsupported = Error(400, "response_format json_schema is not supported", type="invalid_request_error")
    fake.script(
        [
            unsupported,
            Error(400, "Unknown parameter", param="response_format", type="invalid_request_error"),
            reply('Sure! ```json\n{"a": 1}\n```'),
            reply('{"b": 2}'),
        ]
    )
    deadline = Deadline.after(5)
    first, _ = await client.chat_json("planner", MESSAGES, deadline, schema_name="p", schema=SCHEMA)
    second, _ = await client.chat_json("composer", MESSAGES, deadline, schema_name="c", schema=SCHEMA)
    assert (first, second) == ({"a": 1}, {"b": 2})
    formats = [r.response_format for r in fake.requests]
    assert [f and f["type"] for f in formats] == ["json_schema", "json_object", None, None]
    assert client.structured_mode == "off"


@pytest.mark.parametrize(
    "message",
    [
        "context length exceeded",
        "'messages' must contain the word 'json' in some form, to use 'response_format' of type"
        " 'json_object'.",
    ],
)
async def test_other_400s_do_not_trigger_the_fallback(
    client: LLMClient, fake: FakeOpenAI, message: str
) -> None:
    fake.script([Error(400, message, type="invalid_request_error")])
    with pytest.raises(LLMUnavailableError):
        await client.chat_json("planner", MESSAGES, Deadline.after(5), schema_name="p", schema=SCHEMA)
    assert client.structured_mode == "json_schema"


@pytest.mark.parametrize(
    ("mode", "expected"), [("json_object", "json_object"), ("json_schema", "json_schema"), ("off", None)]
)
async def test_configured_json_modes(
    fake: FakeOpenAI, settings: LLMSettings, mode: str, expected: str | None
) -> None:
    llm = LLMClient(dataclasses.replace(settings, json_mode=mode))  # type: ignore[arg-type]
    fake.script([reply('{"ok": true}')])
    try:
        data, _ = await llm.chat_json("planner", MESSAGES, Deadline.after(5), schema_name="p", schema=SCHEMA)
    finally:
        await llm.aclose()
    assert data == {"ok": True}
    fmt = fake.requests[0].response_format
    assert (fmt["type"] if fmt else None) == expected


async def test_configured_mode_does_not_fall_back(fake: FakeOpenAI, settings: LLMSettings) -> None:
    llm = LLMClient(dataclasses.replace(settings, json_mode="json_object"))
    fake.script([Error(400, "response_format is not supported", type="invalid_request_error")])
    try:
        with pytest.raises(LLMUnavailableError):
            await llm.chat_json("planner", MESSAGES, Deadline.after(5), schema_name="p", schema=SCHEMA)
    finally:
        await llm.aclose()
    assert len(fake.requests) == 1


async def test_reply_without_json_is_an_output_error(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([reply("I think everything is fine.")])
    with pytest.raises(LLMOutputError, match="no JSON object") as info:
        await client.chat_json("verifier", MESSAGES, Deadline.after(5), schema_name="v", schema=SCHEMA)
    assert info.value.raw_text == "I think everything is fine."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  \n{"a": {"b": [1, 2]}}\n', {"a": {"b": [1, 2]}}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('Here it is:\n```JSON\n{"a": "x"}\n```\nDone.', {"a": "x"}),
        (
            'The answer is {"a": "has } and { inside", "b": "\\"q\\""} as requested',
            {"a": "has } and { inside", "b": '"q"'},
        ),
        ('note {not json} then {"a": 2}', {"a": 2}),
        ('{"a": 1} and {"b": 2}', {"a": 1}),
        ('{"当前查询未检索到": "中文"}', {"当前查询未检索到": "中文"}),
        # a reply that stopped after its last value with brackets left open: they are closed
        ('{"sentences": [{"slot": 1, "text": "a ] }"}]', {"sentences": [{"slot": 1, "text": "a ] }"}]}),
        ('{"a": {"b": "x"', {"a": {"b": "x"}}),
    ],
)
def test_extract_json(text: str, expected: dict[str, object]) -> None:
    assert extract_json(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no json here",
        "[1, 2]",
        '{"a": 1',
        '{"a": "cut',
        '{"a"',
        '{"a": [1}',
        "```json\n[1]\n```",
        "{" * 10_000,
    ],
)
def test_extract_json_failures(text: str) -> None:
    with pytest.raises(LLMOutputError):
        extract_json(text)


async def test_temperature_and_max_tokens_can_be_left_out(fake: FakeOpenAI, settings: LLMSettings) -> None:
    llm = LLMClient(dataclasses.replace(settings, temperature=None, max_tokens=None))
    fake.script([reply("ok")])
    try:
        await llm.chat("planner", MESSAGES, Deadline.after(5))
    finally:
        await llm.aclose()
    assert "temperature" not in fake.requests[0].body
    assert "max_tokens" not in fake.requests[0].body


async def test_a_500_refusing_json_schema_walks_down_at_once(client: LLMClient, fake: FakeOpenAI) -> None:
    # what llama.cpp's server answers a json_schema response_format with
    fake.script(
        [Error(500, "1 validation error: Input should be 'text' or 'json_object'"), reply('{"a": 1}')]
    )
    data, answer = await client.chat_json(
        "planner", MESSAGES, Deadline.after(5), schema_name="p", schema=SCHEMA
    )
    assert data == {"a": 1}
    # not retried as an outage: the next request already uses the next format, and it is remembered
    assert [r.response_format and r.response_format["type"] for r in fake.requests] == [
        "json_schema",
        "json_object",
    ]
    assert client.structured_mode == "json_object"
    assert "response_format_refused:json_schema" in answer.notes


async def test_a_plain_500_is_still_retried(client: LLMClient, fake: FakeOpenAI) -> None:
    fake.script([Error(500, "internal error"), reply('{"a": 1}')])
    await client.chat_json("planner", MESSAGES, Deadline.after(5), schema_name="p", schema=SCHEMA)
    assert [r.response_format and r.response_format["type"] for r in fake.requests] == ["json_schema"] * 2


@pytest.mark.parametrize(
    ("content", "note"),
    [
        ('{"a": 1}', None),
        ('```json\n{"a": 1}\n```', "json_in_code_fence"),
        ('{"a": 1}\nI hope this helps!', "json_with_surrounding_text"),
        ('{"a": 1, "b": {"c": 2}', "json_brackets_closed"),
    ],
)
async def test_where_the_json_was_found_is_recorded(
    client: LLMClient, fake: FakeOpenAI, content: str, note: str | None
) -> None:
    fake.script([reply(content)])
    data, answer = await client.chat_json(
        "planner", MESSAGES, Deadline.after(5), schema_name="p", schema=SCHEMA
    )
    assert data["a"] == 1
    assert answer.notes == ((note,) if note else ())


TOOLS = [{"type": "function", "function": {"name": "query_logs", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize(
    "content",
    [
        '<tool_call>\n{"name": "query_logs", "arguments": {"keyword": "<term>"}}\n</tool_call>',
        '{"name": "query_logs", "arguments": "{\\"keyword\\": \\"<term>\\"}"}',
        '```json\n{"function": {"name": "query_logs", "parameters": {"keyword": "<term>"}}}\n```',
    ],
)
async def test_tool_calls_written_as_text_become_calls(
    client: LLMClient, fake: FakeOpenAI, content: str
) -> None:
    fake.script([reply(content)])
    answer = await client.chat("executor", MESSAGES, Deadline.after(5), tools=TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("query_logs", {"keyword": "<term>"})
    ]
    assert answer.content is None and answer.notes == ("tool_call_in_text",)


async def test_text_naming_no_offered_tool_stays_text(client: LLMClient, fake: FakeOpenAI) -> None:
    content = '{"name": "drop_database", "arguments": {}}'
    fake.script([reply(content)])
    answer = await client.chat("executor", MESSAGES, Deadline.after(5), tools=TOOLS)
    assert answer.tool_calls == () and answer.content == content


async def test_json_stages_declare_the_shared_tools_and_call_none(
    client: LLMClient, fake: FakeOpenAI
) -> None:
    # a reply naming a declared tool is still the stage's JSON, never read as a call
    fake.script([reply('{"name": "query_logs", "arguments": {"service": "x"}}')])
    data, _ = await client.chat_json(
        "verifier", MESSAGES, Deadline.after(5), schema_name="verdict", schema=SCHEMA
    )
    assert data == {"name": "query_logs", "arguments": {"service": "x"}}
    [request] = fake.requests
    assert request.tools == shared_tools() and request.body["tool_choice"] == "none"


async def test_each_call_logs_its_estimated_prompt_and_what_follows_the_shared_prefix(
    client: LLMClient, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake.script([reply("one"), reply("two")])
    preamble = {"role": "system", "content": "the same first words in both requests " * 20}
    caplog.set_level(logging.INFO, logger="evigate.llm")
    await client.chat("planner", [preamble, {"role": "user", "content": "first question"}], Deadline.after(5))
    await client.chat(
        "verifier", [preamble, {"role": "user", "content": "second question"}], Deadline.after(5)
    )
    estimates = [
        (int(str(r.args[7])), int(str(r.args[8])))
        for r in caplog.records
        if r.msg.startswith("llm.call") and isinstance(r.args, tuple) and r.args[3] == "ok"
    ]
    (first_prompt, _), (second_prompt, second_new) = estimates[-2:]
    assert first_prompt > 100 and second_prompt > 100
    assert 0 < second_new < 10  # "second question": the preamble was read the request before
