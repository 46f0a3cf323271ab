"""What an endpoint sends back, read into a `ChatReply` or a named error.

Endpoints do not always answer with a chat completion: a proxy's HTML login page under status 200,
truncated JSON, an error object under status 200, a completion whose choice has no message, a
message with neither content nor tool calls. Each is named here (`LLMEndpointReplyError.outcome`,
or `LLMOutputError` for an empty reply) so that the stage falls back instead of crashing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openai.types.chat import ChatCompletion, ChatCompletionMessageFunctionToolCall

from evigate.rules.errors import EvigateError
from evigate.server.agents.base import UnusableOutputError

_PREVIEW = 160


class LLMError(EvigateError):
    """Base of the llm backend's errors."""


class LLMUnavailableError(LLMError):
    """The endpoint failed for good: a non-retryable error, or retries exhausted."""

    def __init__(
        self, message: str, *, status: int | None = None, param: str | None = None, attempts: int = 1
    ):
        super().__init__(message)
        self.status = status
        self.param = param
        self.attempts = attempts


class LLMOutputError(LLMError, UnusableOutputError):
    """The model's reply is not what the stage contract needs (e.g. not a JSON object)."""

    def __init__(self, message: str, *, raw_text: str | None = None) -> None:
        super().__init__(message)
        self.raw_text = raw_text


@dataclass(frozen=True)
class ToolCallRequest:
    """A function call requested by the model; `arguments` is the model's raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatReply:
    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    attempts: int = 1
    model: str = ""
    # How the reply had to be read, for the trace: "tool_call_in_text", "json_in_code_fence", ...
    notes: tuple[str, ...] = ()


class LLMEndpointReplyError(LLMUnavailableError):
    """The endpoint answered, but not with a chat completion. `outcome` names what came back:
    "not_a_completion" (an HTML page, plain text, a JSON value that is no object), "truncated_json",
    "error_body" (an error object under status 200) or "malformed_completion". Never retried: the
    same endpoint would send the same thing again."""

    def __init__(self, message: str, *, outcome: str, attempts: int = 1) -> None:
        super().__init__(message, attempts=attempts)
        self.outcome = outcome


def failure_kind(error: BaseException) -> str:
    """How a stage's note names why the model's output was not used: `unusable_output`,
    `endpoint_bad_reply: <outcome>`, `endpoint_refused` (a 4xx other than a timeout or rate limit:
    the request refused, too long a context say) or `endpoint_unavailable`."""
    if isinstance(error, LLMEndpointReplyError):
        return f"endpoint_bad_reply: {error.outcome}"
    if isinstance(error, LLMUnavailableError):
        refused = error.status is not None and 400 <= error.status < 500 and error.status not in (408, 429)
        return "endpoint_refused" if refused else "endpoint_unavailable"
    return "unusable_output"


def read_completion(stage: str, raw: object, *, attempts: int, model: str) -> ChatReply:
    """The reply in `raw`, what `chat.completions.create` returned (the `openai` client hands back
    the body as text, or as whatever JSON it held, when it is not a completion)."""
    if not isinstance(raw, ChatCompletion):
        preview = str(raw).strip().replace("\n", " ")[:_PREVIEW]
        raise LLMEndpointReplyError(
            f"llm {stage}: the endpoint answered with {type(raw).__name__}, "
            f"not a chat completion: {preview!r}",
            outcome="not_a_completion",
            attempts=attempts,
        )
    error = getattr(raw, "error", None)  # extra fields of an unvalidated body stay as attributes
    if raw.choices is None and error is not None:
        message = error.get("message") if isinstance(error, dict) else error
        raise LLMEndpointReplyError(
            f"llm {stage}: the endpoint answered status 200 with an error: {str(message)[:_PREVIEW]}",
            outcome="error_body",
            attempts=attempts,
        )
    if not raw.choices:
        raise LLMOutputError(f"llm {stage}: the endpoint returned no choices")
    choice = raw.choices[0]
    if getattr(choice, "message", None) is None:
        raise LLMEndpointReplyError(
            f"llm {stage}: the endpoint's completion has a choice without a message",
            outcome="malformed_completion",
            attempts=attempts,
        )
    calls = tuple(
        ToolCallRequest(id=call.id, name=call.function.name, arguments=call.function.arguments)
        for call in choice.message.tool_calls or ()
        if isinstance(call, ChatCompletionMessageFunctionToolCall)
    )
    if choice.message.content is None and not calls:
        raise LLMOutputError(
            f"llm {stage}: empty reply (content null, no tool call, finish_reason={choice.finish_reason})"
        )
    usage: dict[str, int] = {}
    if raw.usage is not None:
        usage = {
            "prompt_tokens": raw.usage.prompt_tokens,
            "completion_tokens": raw.usage.completion_tokens,
            "total_tokens": raw.usage.total_tokens,
        }
    return ChatReply(
        content=choice.message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        usage=usage,
        attempts=attempts,
        model=raw.model or model,
    )


def truncated_json(stage: str, error: ValueError, *, attempts: int) -> LLMEndpointReplyError:
    """The error for a body the `openai` client could not decode as the JSON its content type said."""
    return LLMEndpointReplyError(
        f"llm {stage}: the endpoint's JSON reply is cut off or malformed: {error}",
        outcome="truncated_json",
        attempts=attempts,
    )
