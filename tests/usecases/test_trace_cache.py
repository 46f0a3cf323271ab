"""The GetTrace reply cache: entries expire, invalidation is immediate, a reply read before an
invalidation is never stored after it, and concurrent misses share one read."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from evigate.server.usecases.trace_cache import TraceCache
from evigate.v1 import session_pb2, trace_service_pb2

Reply = trace_service_pb2.GetTraceResponse


def _reply(feedback: session_pb2.Feedback.ValueType) -> trace_service_pb2.GetTraceResponse:
    return trace_service_pb2.GetTraceResponse(trace=session_pb2.Trace(feedback=feedback))


def test_put_get_expire_and_invalidate() -> None:
    now = [100.0]
    cache: TraceCache[Reply] = TraceCache(0.05, clock=lambda: now[0])
    cache.put("s", _reply(session_pb2.FEEDBACK_USEFUL), cache.epoch())
    assert cache.get("s") is not None
    cache.invalidate("s")
    assert cache.get("s") is None
    cache.put("s", _reply(session_pb2.FEEDBACK_USEFUL), cache.epoch())
    now[0] += 0.04
    assert cache.get("s") is not None
    now[0] += 0.02
    assert cache.get("s") is None


def test_a_reply_read_before_an_invalidation_is_not_stored() -> None:
    cache: TraceCache[Reply] = TraceCache(10)
    read_epoch = cache.epoch()  # GetTrace starts reading s ...
    cache.invalidate("s")  # ... feedback on s commits meanwhile ...
    cache.put("s", _reply(session_pb2.FEEDBACK_UNSPECIFIED), read_epoch)  # ... the stale read ends
    assert cache.get("s") is None
    cache.put("other", _reply(session_pb2.FEEDBACK_UNSPECIFIED), read_epoch)  # other sessions unaffected
    assert cache.get("other") is not None
    cache.put("s", _reply(session_pb2.FEEDBACK_USEFUL), cache.epoch())  # a read after it is stored
    assert cache.get("s") is not None


def test_forgotten_invalidations_stay_conservative() -> None:
    cache: TraceCache[Reply] = TraceCache(10, max_entries=2)
    read_epoch = cache.epoch()
    for name in ("a", "b", "c"):  # "a" falls out of the bounded invalidation record
        cache.invalidate(name)
    cache.put("a", _reply(session_pb2.FEEDBACK_UNSPECIFIED), read_epoch)
    assert cache.get("a") is None


def test_ttl_zero_is_off() -> None:
    cache: TraceCache[Reply] = TraceCache(0)
    cache.put("s", _reply(session_pb2.FEEDBACK_USEFUL), cache.epoch())
    assert cache.get("s") is None


async def _run_ready() -> None:
    """Lets every task that is ready run up to its next await: one pass of the event loop, no time."""
    await asyncio.sleep(0)


def _loader(
    calls: list[str], gate: asyncio.Event, reply: trace_service_pb2.GetTraceResponse, cacheable: bool = True
) -> Callable[[], Awaitable[tuple[trace_service_pb2.GetTraceResponse, bool]]]:
    async def load() -> tuple[trace_service_pb2.GetTraceResponse, bool]:
        calls.append("read")
        await gate.wait()
        return reply, cacheable

    return load


async def test_concurrent_misses_share_one_read() -> None:
    cache: TraceCache[Reply] = TraceCache(10)
    calls: list[str] = []
    gate = asyncio.Event()
    load = _loader(calls, gate, _reply(session_pb2.FEEDBACK_USEFUL))
    waiting = [asyncio.ensure_future(cache.get_or_load("s", load)) for _ in range(20)]
    await _run_ready()  # every call has started and is waiting on the one read
    gate.set()
    replies = await asyncio.gather(*waiting)
    assert calls == ["read"]
    assert all(reply.trace.feedback == session_pb2.FEEDBACK_USEFUL for reply in replies)
    assert cache.get("s") is not None


async def test_a_read_begun_before_an_invalidation_is_not_joined() -> None:
    cache: TraceCache[Reply] = TraceCache(10)
    calls: list[str] = []
    old_gate, new_gate = asyncio.Event(), asyncio.Event()
    first = asyncio.ensure_future(
        cache.get_or_load("s", _loader(calls, old_gate, _reply(session_pb2.FEEDBACK_UNSPECIFIED)))
    )
    await _run_ready()
    cache.invalidate("s")  # feedback committed while the first read is under way
    second = asyncio.ensure_future(
        cache.get_or_load("s", _loader(calls, new_gate, _reply(session_pb2.FEEDBACK_USEFUL)))
    )
    await _run_ready()
    assert calls == ["read", "read"]  # the second call read for itself
    new_gate.set()
    old_gate.set()
    assert (await second).trace.feedback == session_pb2.FEEDBACK_USEFUL
    assert (await first).trace.feedback == session_pb2.FEEDBACK_UNSPECIFIED
    cached = cache.get("s")
    assert cached is not None and cached.trace.feedback == session_pb2.FEEDBACK_USEFUL


async def test_a_cancelled_reader_does_not_fail_the_calls_waiting_for_it() -> None:
    cache: TraceCache[Reply] = TraceCache(10)
    calls: list[str] = []
    gate = asyncio.Event()
    load = _loader(calls, gate, _reply(session_pb2.FEEDBACK_USEFUL))
    reader = asyncio.ensure_future(cache.get_or_load("s", load))
    await _run_ready()
    waiter = asyncio.ensure_future(cache.get_or_load("s", load))
    await _run_ready()
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    await _run_ready()  # the waiter notices and reads for itself
    gate.set()
    assert (await waiter).trace.feedback == session_pb2.FEEDBACK_USEFUL
    assert calls == ["read", "read"]


async def test_a_failed_read_fails_every_call_waiting_for_it_and_is_not_cached() -> None:
    cache: TraceCache[Reply] = TraceCache(10)
    gate = asyncio.Event()

    async def load() -> tuple[trace_service_pb2.GetTraceResponse, bool]:
        await gate.wait()
        raise LookupError("no such session")

    calls = [asyncio.ensure_future(cache.get_or_load("s", load)) for _ in range(3)]
    await _run_ready()
    gate.set()
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(result, LookupError) for result in results)
    assert cache.get("s") is None


async def test_a_running_sessions_reply_is_shared_but_not_stored() -> None:
    cache: TraceCache[Reply] = TraceCache(10)
    calls: list[str] = []
    gate = asyncio.Event()
    gate.set()
    load = _loader(calls, gate, _reply(session_pb2.FEEDBACK_UNSPECIFIED), cacheable=False)
    await cache.get_or_load("s", load)
    await cache.get_or_load("s", load)
    assert calls == ["read", "read"]
