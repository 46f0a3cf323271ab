"""A short-lived cache of finished sessions' GetTrace replies.

Reading a trace costs several queries plus the conversion of every round. A session that is no
longer RUNNING changes only through feedback (its `feedback`, `case_id`, `update_time`) and its one
evidence score, so its reply is kept for `ttl` seconds, and every change this process writes drops
the entry once the write has committed: SubmitFeedback, and the in-process evaluation worker after
writing a score (`EvaluationWorker(on_scored=...)`). A reply read from the database while such a
change was being written is not stored (the epoch check in `put`), so it cannot outlive the change.
A change written by another process (another replica's feedback, or its worker scoring a session
that finished here) is visible after at most `ttl` seconds. `ttl` 0 turns the cache off.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from evigate.v1 import trace_service_pb2


class TraceCache:
    def __init__(
        self, ttl_s: float, max_entries: int = 4096, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl_s
        self._clock = clock
        self._max = max_entries
        self._entries: OrderedDict[str, tuple[float, trace_service_pb2.GetTraceResponse]] = OrderedDict()
        # Every invalidation advances the epoch; `_changed` keeps each session's last one (bounded:
        # `_forgotten` is the newest epoch dropped from it, an upper bound for any session not in it).
        self._epoch = 0
        self._changed: OrderedDict[str, int] = OrderedDict()
        self._forgotten = 0

    @property
    def enabled(self) -> bool:
        return self._ttl > 0

    def epoch(self) -> int:
        """Taken before reading a trace from the database; handed back to `put`."""
        return self._epoch

    def get(self, session_id: str) -> trace_service_pb2.GetTraceResponse | None:
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        if entry[0] < self._clock():
            del self._entries[session_id]
            return None
        return entry[1]

    def put(self, session_id: str, reply: trace_service_pb2.GetTraceResponse, read_epoch: int) -> None:
        """Stores a reply read from the database after `epoch()` returned `read_epoch`, unless the
        session was invalidated since: that read may predate the change."""
        if not self.enabled or self._changed.get(session_id, self._forgotten) > read_epoch:
            return
        self._entries[session_id] = (self._clock() + self._ttl, reply)
        self._entries.move_to_end(session_id)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def invalidate(self, session_id: str) -> None:
        """After a change to the session has been written."""
        self._entries.pop(session_id, None)
        if not self.enabled:
            return
        self._epoch += 1
        self._changed[session_id] = self._epoch
        self._changed.move_to_end(session_id)
        while len(self._changed) > self._max:
            self._forgotten = self._changed.popitem(last=False)[1]
