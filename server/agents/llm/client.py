"""A thin, deadline-aware wrapper over `openai.AsyncOpenAI` chat completions.

Retries are ours, not the openai client's (it gets max_retries=0): exponential backoff with jitter
on 429, 5xx and connection errors / timeouts, and never past the call's deadline. Every HTTP attempt
gets `timeout = deadline.cap(settings.timeout_s)` and is also bounded by asyncio, so a slow-dripping
endpoint cannot outlive the deadline either.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import openai

from evigate.server.agents.llm.budget import estimate_tokens, rendered, shared_prefix, shared_tools
from evigate.server.agents.llm.llm_settings import LLMSettings, Stage
from evigate.server.agents.llm.replies import (
    ChatReply,
    LLMEndpointReplyError,
    LLMError,
    LLMOutputError,
    LLMUnavailableError,
    ToolCallRequest,
    read_completion,
    truncated_json,
)
from evigate.server.agents.llm.text_calls import json_placement, tool_calls_in_text
from evigate.server.deadline import Deadline, DeadlineExceeded
from evigate.server.jsontext import find_json_object

JSON = dict[str, Any]
__all__ = [
    "ChatReply",
    "LLMClient",
    "LLMEndpointReplyError",
    "LLMError",
    "LLMOutputError",
    "LLMUnavailableError",
    "ToolCallRequest",
    "extract_json",
]

log = logging.getLogger("evigate.llm")

_RETRYABLE_STATUS = frozenset({408, 409, 429})
# the last request sent to each endpoint, as a template lays it out: a server keeps one cache
# whichever client or session asked (the prefix estimate of the `llm.call` log line)
_LAST_SENT: dict[str, str] = {}
# auto mode walks down this ladder when the endpoint rejects a response_format (remembered per client)
_AUTO_LADDER: tuple[str, ...] = ("json_schema", "json_object", "off")


class LLMClient:
    """One per process (or per backend); safe to share between concurrent sessions."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._jitter = jitter
        self._auto_level = 0
        self._openai = openai.AsyncOpenAI(
            api_key=settings.api_key or "unused",  # local endpoints often need none; openai insists
            base_url=settings.base_url,
            max_retries=0,
            timeout=settings.timeout_s,
        )

    def __repr__(self) -> str:
        return f"LLMClient({self.settings!r})"

    async def aclose(self) -> None:
        await self._openai.close()

    @property
    def structured_mode(self) -> str:
        """The response_format currently used for JSON stages ("json_schema" | "json_object" | "off")."""
        if self.settings.json_mode == "auto":
            return _AUTO_LADDER[self._auto_level]
        return self.settings.json_mode

    # -- one chat completion, with retries ------------------------------------------------------
    async def chat(
        self,
        stage: Stage,
        messages: Sequence[JSON],
        deadline: Deadline,
        *,
        tools: Sequence[JSON] | None = None,
        tool_choice: str | None = None,
        response_format: JSON | None = None,
    ) -> ChatReply:
        """One completion. Raises DeadlineExceeded, LLMUnavailableError (LLMEndpointReplyError when the
        endpoint answered with something other than a completion), or LLMOutputError (no choices, or
        an empty reply)."""
        settings = self.settings
        model = settings.model_for(stage)
        request = rendered(messages, tools)
        before = _LAST_SENT.get(settings.base_url, "")
        estimate = _Estimate(
            estimate_tokens(request), estimate_tokens(request[shared_prefix(before, request) :])
        )
        _LAST_SENT[settings.base_url] = request
        attempt = 0
        while True:
            attempt += 1
            timeout = deadline.cap(settings.timeout_s)
            if deadline.expired() or timeout <= 0:
                raise DeadlineExceeded(f"llm {stage}: deadline exceeded before attempt {attempt}")
            started = time.monotonic()
            try:
                async with asyncio.timeout(timeout):
                    completion = await self._openai.chat.completions.create(
                        model=model,
                        messages=cast(Any, list(messages)),
                        tools=cast(Any, list(tools)) if tools else openai.omit,
                        tool_choice=cast(Any, tool_choice) if tools and tool_choice else openai.omit,
                        response_format=cast(Any, response_format) if response_format else openai.omit,
                        temperature=openai.omit if settings.temperature is None else settings.temperature,
                        max_tokens=openai.omit if settings.max_tokens is None else settings.max_tokens,
                        timeout=timeout,
                    )
            except (TimeoutError, openai.APIConnectionError) as exc:
                failure: Exception = exc
                kind = "timeout" if isinstance(exc, TimeoutError | openai.APITimeoutError) else "connection"
                retry_after = None
                if deadline.expired():
                    _log_attempt(stage, model, attempt, started=started, outcome="deadline")
                    raise DeadlineExceeded(
                        f"llm {stage}: deadline exceeded during attempt {attempt}"
                    ) from exc
            except openai.APIStatusError as exc:
                failure, kind = exc, f"http {exc.status_code}"
                retry_after = _retry_after(exc)
                refused_format = response_format is not None and _concerns_response_format(
                    exc.status_code, exc.message, exc.param
                )
                if refused_format or (exc.status_code not in _RETRYABLE_STATUS and exc.status_code < 500):
                    _log_attempt(stage, model, attempt, started=started, outcome=kind)
                    raise LLMUnavailableError(
                        f"llm {stage}: endpoint rejected the request ({exc.status_code}): {exc.message}",
                        status=exc.status_code,
                        param=exc.param,
                        attempts=attempt,
                    ) from exc
            except openai.OpenAIError as exc:
                _log_attempt(stage, model, attempt, started=started, outcome=type(exc).__name__)
                raise LLMUnavailableError(
                    f"llm {stage}: {type(exc).__name__}: {exc}", attempts=attempt
                ) from exc
            except ValueError as exc:  # a JSON body cut short: the openai client's decoder gave up
                _log_attempt(stage, model, attempt, started=started, outcome="truncated_json")
                raise truncated_json(stage, exc, attempts=attempt) from exc
            else:
                # a call written as text is read as one only where the stage may call a tool
                offered = tools if tool_choice != "none" else None
                return _reply(
                    stage,
                    completion,
                    offered,
                    attempt=attempt,
                    model=model,
                    started=started,
                    estimate=estimate,
                )

            _log_attempt(stage, model, attempt, started=started, outcome=kind)
            if attempt > settings.max_retries:
                raise LLMUnavailableError(
                    f"llm {stage}: {kind} after {attempt} attempts: {failure}",
                    status=getattr(failure, "status_code", None),
                    attempts=attempt,
                ) from failure
            delay = self._backoff(attempt, retry_after)
            left = deadline.remaining()
            if left is not None and delay >= left:
                raise DeadlineExceeded(
                    f"llm {stage}: no time left to retry after {kind} (attempt {attempt})"
                ) from failure
            await self._sleep(delay)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        settings = self.settings
        exp = min(settings.backoff_max, settings.backoff_base * 2.0 ** (attempt - 1))
        delay = exp * (0.5 + 0.5 * self._jitter())  # "equal jitter": spread, but never near zero
        if retry_after is not None:
            delay = max(delay, min(retry_after, settings.backoff_max))
        return delay

    # -- JSON stages -----------------------------------------------------------------------------
    async def chat_json(
        self,
        stage: Stage,
        messages: Sequence[JSON],
        deadline: Deadline,
        *,
        schema_name: str,
        schema: JSON,
        standalone: bool = False,
    ) -> tuple[JSON, ChatReply]:
        """A completion whose reply must be one JSON object; uses response_format per json_mode. It
        declares the tools every stage declares (the shared prefix, server.agents.llm.budget) with
        `tool_choice: none`: the reply is the JSON, never a call. A `standalone` request (a short
        task that a small model does better without the tools block in front) declares none.

        Raises LLMOutputError when the reply holds no JSON object. The reply's notes say where the
        JSON was found (a code fence, text around it) and which response formats were refused."""
        refused: list[str] = []
        while True:
            mode = self.structured_mode
            try:
                reply = await self.chat(
                    stage,
                    messages,
                    deadline,
                    tools=None if standalone else shared_tools(),
                    tool_choice=None if standalone else "none",
                    response_format=_response_format(mode, schema_name, schema),
                )
            except LLMUnavailableError as exc:
                if self.settings.json_mode == "auto" and mode != "off" and _rejects_response_format(exc):
                    level = _AUTO_LADDER.index(mode) + 1
                    self._auto_level = max(self._auto_level, level)
                    log.warning(
                        "llm.response_format_unsupported stage=%s mode=%s next=%s",
                        stage,
                        mode,
                        _AUTO_LADDER[level],
                    )
                    refused.append(f"response_format_refused:{mode}")
                    continue
                raise
            content = reply.content or ""
            data = extract_json(content)
            placement = json_placement(content)
            notes = (*reply.notes, *refused, *((placement,) if placement else ()))
            return data, dataclasses.replace(reply, notes=notes) if notes else reply


def _response_format(mode: str, schema_name: str, schema: JSON) -> JSON | None:
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "schema": schema, "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _rejects_response_format(exc: LLMUnavailableError) -> bool:
    return exc.status is not None and _concerns_response_format(exc.status, str(exc), exc.param)


# llama.cpp's server answers a json_schema response_format with HTTP 500 "Input should be 'text' or
# 'json_object'": a 500 that names the format is the endpoint refusing it, not a passing outage.
_FORMAT_STATUS = frozenset({400, 422, 500})
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format")


def _concerns_response_format(status: int, message: str, param: str | None) -> bool:
    if status not in _FORMAT_STATUS:
        return False
    text = message.lower()
    if "must contain the word" in text:
        return False  # OpenAI's "messages must contain the word 'json'": our prompt's fault, not the mode's
    if param == "response_format":
        return True
    return any(word in text for word in _FORMAT_WORDS)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(str(value)) * scale)
            except ValueError:
                return None
    return None


@dataclasses.dataclass(frozen=True)
class _Estimate:
    """A request's prompt tokens as estimated here (budget.estimate_tokens, an upper estimate),
    and those after the prefix it shares with the request sent before it: what a server that
    keeps its cache (llama.cpp) has to read."""

    prompt: int
    new: int


def _reply(
    stage: str,
    completion: object,
    tools: Sequence[JSON] | None,
    *,
    attempt: int,
    model: str,
    started: float,
    estimate: _Estimate,
) -> ChatReply:
    try:
        reply = read_completion(stage, completion, attempts=attempt, model=model)
    except LLMEndpointReplyError as exc:
        _log_attempt(stage, model, attempt, started=started, outcome=exc.outcome)
        raise
    _log_attempt(stage, model, attempt, started=started, outcome="ok", tokens=reply.usage, estimate=estimate)
    if tools and not reply.tool_calls and reply.content:
        # small local models often write the call as text instead of using the protocol
        offered = {str(t.get("function", {}).get("name", "")) for t in tools}
        found = tuple(
            ToolCallRequest(f"text-call-{i}", name, arguments)
            for i, (name, arguments) in enumerate(tool_calls_in_text(reply.content, offered), 1)
        )
        if found:
            reply = dataclasses.replace(
                reply, tool_calls=found, content=None, notes=(*reply.notes, "tool_call_in_text")
            )
    return reply


def _log_attempt(
    stage: str,
    model: str,
    attempt: int,
    *,
    started: float,
    outcome: str,
    tokens: dict[str, int] | None = None,
    estimate: _Estimate | None = None,
) -> None:
    latency_ms = (time.monotonic() - started) * 1000
    level = logging.INFO if outcome == "ok" else logging.WARNING
    log.log(
        level,
        "llm.call stage=%s model=%s attempt=%d outcome=%s latency_ms=%.0f tokens=%d prompt_tokens=%d "
        "estimated_prompt_tokens=%d estimated_new_tokens=%d",
        stage,
        model,
        attempt,
        outcome,
        latency_ms,
        (tokens or {}).get("total_tokens", 0),
        (tokens or {}).get("prompt_tokens", 0),
        estimate.prompt if estimate else 0,
        estimate.new if estimate else 0,
    )


# -- plain JSON extraction -----------------------------------------------------------------------
def extract_json(text: str) -> JSON:
    """The JSON object in a model reply (see server.jsontext.find_json_object).
    Raises LLMOutputError when there is none."""
    value = find_json_object(text)
    if value is None:
        preview = text.strip()[:120].replace("\n", " ")
        raise LLMOutputError(f"the reply holds no JSON object: {preview!r}", raw_text=text)
    return value
