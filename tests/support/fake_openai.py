"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benches.

The `MockTransport` of the LLM path: the code under test talks to it through the real `openai` client
over real HTTP, so timeouts, retries, disconnects and tool-calling round trips are exercised for real.

Usage::

    with FakeOpenAI() as fake:
        fake.script([Error(429), reply('{"verdict": "PASS"}')])
        settings = LLMSettings(base_url=fake.base_url, api_key="sk-test")
        ...
        assert len(fake.requests) == 2

API:
- `FakeOpenAI(default=None)`: a context manager (or `start()` / `stop()`); `base_url` ends in `/v1`.
- `script(steps)`: appends steps to the queue; each POST /v1/chat/completions consumes one step.
  A step is a `Reply`, an `Error`, a `Hang`, a `Disconnect`, a `Raw` body (any status and content
  type), a `Drip` (a body sent one byte at a time), or a callable
  `RecordedRequest -> step` (to answer from what the request holds, e.g. invocation ids in tool results).
- `default`: the step (or callable) used when the queue is empty; without it an unscripted request
  gets a 400 error whose message says so (never retried by clients, so tests fail loudly).
- `requests`: a snapshot list of every `RecordedRequest` received, in arrival order.
- `pending`: how many scripted steps are left; `wait_for_requests(n, timeout)` blocks until n arrived
  (from async tests: `await asyncio.to_thread(fake.wait_for_requests, 1, 2.0)`).

Per-stage answers for long runs (benches): give each stage its own model in LLMSettings
(`planner_model="planner"`, ...) and switch on it in a default responder::

    answers = {"planner": json_reply(PLAN), "verifier": json_reply(VERDICT), ...}
    FakeOpenAI(default=lambda request: dataclasses.replace(answers[request.model], delay=0.3))

Every step may carry `delay` seconds before it acts. `Hang` holds the request open until the client
disconnects (or the server stops); `RecordedRequest.disconnected_at` tells when the client gave up.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One function call the fake model asks for."""

    name: str
    arguments: Mapping[str, Any] | str  # a str is sent verbatim (e.g. malformed JSON)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion with `content` and/or `tool_calls`."""

    content: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    finish_reason: str | None = None  # default: "tool_calls" if tool_calls else "stop"
    usage: Mapping[str, int] | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Error:
    """An HTTP error status with an OpenAI error body."""

    status: int
    message: str = "fake error"
    type: str = "server_error"
    code: str | None = None
    param: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Hang:
    """Never answer: hold the connection until the client disconnects or the server stops."""

    delay: float = 0.0


@dataclass(frozen=True)
class Disconnect:
    """Close the connection without sending a response."""

    delay: float = 0.0


@dataclass(frozen=True)
class Raw:
    """Any body with any status, sent as is (a dict is JSON-encoded): for malformed responses."""

    body: Mapping[str, Any] | str
    status: int = 200
    delay: float = 0.0
    content_type: str = "application/json"


@dataclass(frozen=True)
class Drip:
    """A 200 completion whose body trickles out one byte every `interval` seconds: a very slow
    stream. Stops early when the client goes away or the server stops."""

    content: str = "slow"
    interval: float = 0.5
    delay: float = 0.0


def reply(content: str, *, delay: float = 0.0) -> Reply:
    return Reply(content=content, delay=delay)


def json_reply(data: Any, *, delay: float = 0.0) -> Reply:
    return Reply(content=json.dumps(data, ensure_ascii=False), delay=delay)


def tool_calls(*calls: ToolCall, content: str | None = None, delay: float = 0.0) -> Reply:
    return Reply(content=content, tool_calls=calls, delay=delay)


def tool_call(name: str, arguments: Mapping[str, Any] | str, *, id: str | None = None) -> ToolCall:
    return ToolCall(name=name, arguments=arguments, id=id)


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: JSON
    received_at: float  # time.monotonic()
    outcome: str = ""  # "reply" | "error 429" | "hang" | "disconnect" | "unscripted"
    disconnected_at: float | None = None  # when a Hang saw the client go away
    _gone: threading.Event = field(default_factory=threading.Event, repr=False)

    def wait_disconnected(self, timeout: float) -> bool:
        """Blocks until a hung request's client has gone away (True) or `timeout` passes (False)."""
        return self._gone.wait(timeout)

    @property
    def messages(self) -> list[JSON]:
        messages = self.body.get("messages", [])
        return list(messages) if isinstance(messages, list) else []

    @property
    def model(self) -> str | None:
        model = self.body.get("model")
        return model if isinstance(model, str) else None

    @property
    def tools(self) -> list[JSON]:
        tools = self.body.get("tools", [])
        return list(tools) if isinstance(tools, list) else []

    @property
    def response_format(self) -> JSON | None:
        fmt = self.body.get("response_format")
        return fmt if isinstance(fmt, dict) else None

    def tool_results(self) -> list[Any]:
        """The content of every `tool` message, JSON-decoded when possible."""
        out: list[Any] = []
        for message in self.messages:
            if message.get("role") == "tool":
                content = message.get("content")
                try:
                    out.append(json.loads(content) if isinstance(content, str) else content)
                except json.JSONDecodeError:
                    out.append(content)
        return out

    def text(self) -> str:
        """All message contents joined: handy for `in` assertions on prompts."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
        return "\n".join(parts)


Step = Reply | Error | Hang | Disconnect | Raw | Drip
Responder = Step | Callable[[RecordedRequest], Step]


class FakeOpenAI:
    """A threaded HTTP server replaying a script of chat-completion responses."""

    def __init__(self, *, default: Responder | None = None, host: str = "127.0.0.1") -> None:
        self.default = default
        self._host = host
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._queue: deque[Responder] = deque()
        self._requests: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        server = _Server((self._host, 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ends hangs and delays, closes open connections and joins the serving thread."""
        self._stopping.set()
        server = self._server
        if server is None:
            return
        server.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- test API ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, steps: Iterable[Responder]) -> None:
        with self._lock:
            self._queue.extend(steps)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float) -> bool:
        """Blocks until `count` requests have arrived (True) or `timeout` passes (False)."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self._requests) >= count, timeout)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    # -- server side ---------------------------------------------------------------------------
    def _next(self, request: RecordedRequest) -> Step | None:
        with self._lock:
            request.index = len(self._requests)
            self._requests.append(request)
            self._arrived.notify_all()
            responder = self._queue.popleft() if self._queue else self.default
        if responder is None:
            return None
        return responder(request) if callable(responder) else responder

    def _completion(self, step: Reply, model: str | None) -> JSON:
        calls = [
            {
                "id": call.id or f"call_{next(self._ids)}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in step.tool_calls
        ]
        message: JSON = {"role": "assistant", "content": step.content}
        if calls:
            message["tool_calls"] = calls
        usage = dict(step.usage) if step.usage else {"prompt_tokens": 10, "completion_tokens": 5}
        usage.setdefault("total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model or "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": step.finish_reason or ("tool_calls" if calls else "stop"),
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 512  # benches open hundreds of concurrent connections
    fake: FakeOpenAI


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.fake._lock:
            self.server.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.fake._lock:
            self.server.fake._connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self._send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        request = RecordedRequest(
            index=-1,  # set when recorded
            method="POST",
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body if isinstance(body, dict) else {"_raw": body},
            received_at=time.monotonic(),
        )
        if not self.path.rstrip("/").endswith("/chat/completions"):
            request.outcome = "not found"
            with fake._lock:
                request.index = len(fake._requests)
                fake._requests.append(request)
                fake._arrived.notify_all()
            self._send_json(
                404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}}
            )
            return
        step = fake._next(request)
        if step is None:
            request.outcome = "unscripted"
            message = f"fake_openai: no scripted response left for request #{request.index}"
            self._send_json(400, {"error": {"message": message, "type": "invalid_request_error"}})
            return
        if step.delay and fake._stopping.wait(step.delay):
            self.close_connection = True
            return
        if isinstance(step, Reply):
            request.outcome = "reply"
            self._send_json(200, fake._completion(step, request.model))
        elif isinstance(step, Error):
            request.outcome = f"error {step.status}"
            error = {"message": step.message, "type": step.type, "param": step.param, "code": step.code}
            self._send_json(step.status, {"error": error}, step.headers)
        elif isinstance(step, Raw):
            request.outcome = f"raw {step.status}"
            self._send_body(step.status, step.body, content_type=step.content_type)
        elif isinstance(step, Drip):
            request.outcome = "drip"
            self._drip(fake._completion(Reply(content=step.content), request.model), step.interval)
        elif isinstance(step, Hang):
            request.outcome = "hang"
            self._hang(request)
        else:
            request.outcome = "disconnect"
            self._drop()

    def _hang(self, request: RecordedRequest) -> None:
        fake = self.server.fake
        while not fake._stopping.is_set():
            try:
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    break
            except (OSError, ValueError):
                break
        if not fake._stopping.is_set():
            request.disconnected_at = time.monotonic()
            request._gone.set()
        self._drop()

    def _drip(self, payload: JSON, interval: float) -> None:
        data = json.dumps(payload).encode()
        fake = self.server.fake
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                if fake._stopping.wait(interval):
                    break
        except OSError:
            pass  # the client gave up, as it should
        self._drop()

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_json(self, status: int, payload: JSON, headers: Mapping[str, str] | None = None) -> None:
        self._send_body(status, payload, headers)

    def _send_body(
        self,
        status: int,
        payload: Mapping[str, Any] | str,
        headers: Mapping[str, str] | None = None,
        *,
        content_type: str = "application/json",
    ) -> None:
        text = payload if isinstance(payload, str) else json.dumps(dict(payload), ensure_ascii=False)
        data = text.encode()
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True
