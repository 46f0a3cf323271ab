"""A short-lived cache of finished sessions' GetTrace replies.

Reading a trace costs several queries plus the conversion of every round; a finished session changes
only through feedback and its (one) evidence score. So the reply of a session that is no longer
RUNNING is kept for `ttl` seconds: feedback submitted through this process drops the entry at once,
while a change made elsewhere (another replica's feedback, the evidence score) is visible after at
most `ttl` seconds. `ttl` 0 turns the cache off.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from evigate.v1 import trace_service_pb2


class TraceCache:
    def __init__(self, ttl_s: float, max_entries: int = 4096) -> None:
        self._ttl = ttl_s
        self._max = max_entries
        self._entries: OrderedDict[str, tuple[float, trace_service_pb2.GetTraceResponse]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self._ttl > 0

    def get(self, session_id: str) -> trace_service_pb2.GetTraceResponse | None:
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        if entry[0] < time.monotonic():
            del self._entries[session_id]
            return None
        return entry[1]

    def put(self, session_id: str, reply: trace_service_pb2.GetTraceResponse) -> None:
        if not self.enabled:
            return
        self._entries[session_id] = (time.monotonic() + self._ttl, reply)
        self._entries.move_to_end(session_id)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def invalidate(self, session_id: str) -> None:
        self._entries.pop(session_id, None)
