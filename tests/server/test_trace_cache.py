"""The GetTrace reply cache: entries expire, invalidation is immediate, and a reply read before an
invalidation is never stored after it."""

from __future__ import annotations

from evigate.v1 import session_pb2, trace_service_pb2

from server.grpc.trace_cache import TraceCache


def _reply(feedback: session_pb2.Feedback.ValueType) -> trace_service_pb2.GetTraceResponse:
    return trace_service_pb2.GetTraceResponse(trace=session_pb2.Trace(feedback=feedback))


def test_put_get_expire_and_invalidate() -> None:
    now = [100.0]
    cache = TraceCache(0.05, clock=lambda: now[0])
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
    cache = TraceCache(10)
    read_epoch = cache.epoch()  # GetTrace starts reading s ...
    cache.invalidate("s")  # ... feedback on s commits meanwhile ...
    cache.put("s", _reply(session_pb2.FEEDBACK_UNSPECIFIED), read_epoch)  # ... the stale read ends
    assert cache.get("s") is None
    cache.put("other", _reply(session_pb2.FEEDBACK_UNSPECIFIED), read_epoch)  # other sessions unaffected
    assert cache.get("other") is not None
    cache.put("s", _reply(session_pb2.FEEDBACK_USEFUL), cache.epoch())  # a read after it is stored
    assert cache.get("s") is not None


def test_forgotten_invalidations_stay_conservative() -> None:
    cache = TraceCache(10, max_entries=2)
    read_epoch = cache.epoch()
    for name in ("a", "b", "c"):  # "a" falls out of the bounded invalidation record
        cache.invalidate(name)
    cache.put("a", _reply(session_pb2.FEEDBACK_UNSPECIFIED), read_epoch)
    assert cache.get("a") is None


def test_ttl_zero_is_off() -> None:
    cache = TraceCache(0)
    cache.put("s", _reply(session_pb2.FEEDBACK_USEFUL), cache.epoch())
    assert cache.get("s") is None
