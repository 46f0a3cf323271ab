"""Bearer-token authentication (a server interceptor), and the wrapper put around every method's
handler at registration that decodes the request, maps every error to a status (server.grpc.errors),
logs one line and records metrics."""

from __future__ import annotations

import asyncio
import hmac
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from evigate.server.grpc.errors import (
    FieldViolation,
    InvalidArgumentError,
    RpcStatus,
    Unauthenticated,
    to_status,
)
from evigate.server.grpc.logs import call_context, log_fields
from evigate.server.grpc.memory import RequestBytes
from evigate.server.grpc.metrics import Metrics

log = logging.getLogger("evigate.rpc")
HEALTH_PREFIX = "/grpc.health.v1.Health/"
_ERROR_CODES = frozenset({"INTERNAL", "UNKNOWN"})
Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]
Wrap = Callable[[str, grpc.RpcMethodHandler], grpc.RpcMethodHandler]


def _metadata(details: grpc.HandlerCallDetails, key: str) -> str | None:
    for item_key, value in details.invocation_metadata or ():
        if item_key == key:
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return None


def _same_kind(handler: grpc.RpcMethodHandler, behavior: Any) -> grpc.RpcMethodHandler:
    """A handler of the original's kind and serializers with another behavior."""
    kwargs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(behavior, **kwargs)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(behavior, **kwargs)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(behavior, **kwargs)
    return grpc.unary_unary_rpc_method_handler(behavior, **kwargs)


class AuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """`authorization: Bearer <token>` must match one configured token (constant-time compare).
    A call without one is answered UNAUTHENTICATED before any handler runs."""

    def __init__(self, tokens: Sequence[str], exempt_health: bool, wrap: Wrap) -> None:
        self._tokens = [t.encode() for t in tokens]
        self._exempt_health = exempt_health
        self._wrap = wrap  # the call wrapper, so that denials are logged and counted like any call
        # method -> (the handler it denies, the denying handler); built once per method
        self._denied: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def _valid(self, header: str | None) -> bool:
        if header is None:
            return False
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return False
        presented = token.strip().encode()
        # Compare with every token so the time taken does not tell which one nearly matched.
        return any([hmac.compare_digest(presented, known) for known in self._tokens])

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        method: str = details.method
        if self._exempt_health and method.startswith(HEALTH_PREFIX):
            return await continuation(details)
        if self._valid(_metadata(details, "authorization")):
            return await continuation(details)
        handler = await continuation(details)
        if handler is None:
            return None
        denied = self._denied.get(method)
        if denied is None or denied[0] is not handler:
            denial = _same_kind(handler, _deny_stream if handler.response_streaming else _deny)
            denied = self._denied[method] = (handler, self._wrap(method, denial))
        return denied[1]


async def _deny(request: Any, context: grpc.aio.ServicerContext) -> Any:
    """UNAUTHENTICATED with an ErrorInfo like every other error. Aborted here rather than raised:
    client-streaming handlers (reflection) are not wrapped, so nothing else would map it."""
    presented = any(key == "authorization" for key, _ in context.invocation_metadata() or ())
    await _abort(context, to_status(Unauthenticated(token_presented=presented)))


async def _deny_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
    await _deny(request, context)
    yield  # pragma: no cover - makes this an async generator


class CallWrapper:
    """Wraps each method's handler once, when it is registered (server.grpc.registration): the
    wrapper decodes the request itself (so malformed bytes are INVALID_ARGUMENT, not INTERNAL), maps
    raised errors to statuses in one place, logs one line per call and records RPC metrics.

    Wrapping at registration rather than in an interceptor keeps the per-call path short: no
    interceptor chain to run and no wrapper to look up for every call."""

    def __init__(self, metrics: Metrics, requests: RequestBytes) -> None:
        self._metrics = metrics
        self._requests = requests

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """`method` is the full name, `/package.Service/Method`. Client-streaming handlers are not
        wrapped (none of ours is; reflection maps its own errors)."""
        if handler.request_streaming:
            return handler
        if handler.response_streaming:
            # A handler that writes with context.write() (grpc_health's Watch) is a coroutine, not an
            # async generator: iterating it would fail every call.
            generator = inspect.isasyncgenfunction(handler.unary_stream)
            streaming = _stream_wrapper if generator else _writer_wrapper
            return grpc.unary_stream_rpc_method_handler(
                streaming(handler, method, self._finish, self._requests),
                request_deserializer=None,
                response_serializer=handler.response_serializer,
            )
        return grpc.unary_unary_rpc_method_handler(
            _unary_wrapper(handler, method, self._finish, self._requests),
            request_deserializer=None,
            response_serializer=handler.response_serializer,
        )

    def _finish(self, method: str, code: str, start: float, session_id: str) -> None:
        # The call's bookkeeping runs in the event loop's next pass, once gRPC has the reply to send:
        # the client does not wait for the log line and the metrics.
        elapsed = time.perf_counter() - start
        asyncio.get_running_loop().call_soon(self._record, method, code, elapsed, session_id)

    def _record(self, method: str, code: str, elapsed: float, session_id: str) -> None:
        self._metrics.observe_rpc(method, code, elapsed)
        level = logging.ERROR if code in _ERROR_CODES else logging.INFO
        if log.isEnabledFor(level):
            fields = {
                "rpc": method,
                "code": code,
                "latency_ms": round(elapsed * 1000, 3),
                "session_id": session_id,
            }
            log_fields(log, level, "rpc", fields)


async def _abort(context: grpc.aio.ServicerContext, status: RpcStatus) -> None:
    await context.abort(status.code, status.message, trailing_metadata=status.trailing_metadata())


def _code_name(code: Any) -> str:
    return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"


Finish = Callable[[str, str, float, str], None]


def _parse(decode: Callable[[bytes], Any] | None, raw: bytes) -> Any:
    """Decodes the request here so that malformed bytes are INVALID_ARGUMENT (grpc says INTERNAL)."""
    try:
        return decode(raw) if decode is not None else raw
    except (DecodeError, ValueError):
        raise InvalidArgumentError(
            "MALFORMED_REQUEST", (FieldViolation("", "not a valid protobuf message"),)
        ) from None


def _unary_wrapper(
    handler: grpc.RpcMethodHandler, method: str, finish: Finish, requests: RequestBytes
) -> Any:
    behavior, decode = handler.unary_unary, handler.request_deserializer

    async def unary_unary(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
        start, code, session = time.perf_counter(), "OK", ""
        try:
            with requests.hold(len(raw)):
                request = _parse(decode, raw)
                session = getattr(request, "session_id", "")
                call_context.set({"rpc": method, "session_id": session})
                response = await behavior(request, context)
            session = session or getattr(response, "session_id", "")
            return response
        except grpc.aio.AbortError:
            code = _code_name(context.code())
            raise
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        except Exception as error:
            status = to_status(error)
            code = status.code.name
            await _abort(context, status)
        finally:
            finish(method, code, start, session)

    return unary_unary


def _stream_wrapper(
    handler: grpc.RpcMethodHandler, method: str, finish: Finish, requests: RequestBytes
) -> Any:
    behavior, decode = handler.unary_stream, handler.request_deserializer

    async def unary_stream(raw: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        start, code, session = time.perf_counter(), "OK", ""
        try:
            with requests.hold(len(raw)):
                request = _parse(decode, raw)
                session = getattr(request, "session_id", "")
                fields = {"rpc": method, "session_id": session}
                call_context.set(fields)
                async for item in behavior(request, context):
                    if not session:
                        # The server chose the id: later lines of this call (and of the pipeline
                        # task, which shares this dict) carry it from now on.
                        session = fields["session_id"] = getattr(item, "session_id", "")
                    yield item
        except grpc.aio.AbortError:
            code = _code_name(context.code())
            raise
        except (asyncio.CancelledError, GeneratorExit):
            code = "CANCELLED"
            raise
        except Exception as error:
            status = to_status(error)
            code = status.code.name
            await _abort(context, status)
        finally:
            finish(method, code, start, session)

    return unary_stream


def _writer_wrapper(
    handler: grpc.RpcMethodHandler, method: str, finish: Finish, requests: RequestBytes
) -> Any:
    """The unary-stream wrapper for handlers that send with `await context.write(...)`."""
    behavior, decode = handler.unary_stream, handler.request_deserializer

    async def unary_stream(raw: bytes, context: grpc.aio.ServicerContext) -> None:
        start, code = time.perf_counter(), "OK"
        try:
            with requests.hold(len(raw)):
                request = _parse(decode, raw)
                call_context.set({"rpc": method, "session_id": ""})
                await behavior(request, context)
        except grpc.aio.AbortError:
            code = _code_name(context.code())
            raise
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        except Exception as error:
            status = to_status(error)
            code = status.code.name
            await _abort(context, status)
        finally:
            finish(method, code, start, "")

    return unary_stream
