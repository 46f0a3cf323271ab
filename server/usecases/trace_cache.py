"""A short-lived cache of finished sessions' traces, as each front end presents them.

Reading a trace costs several queries plus the conversion of every round. A session that is no
longer RUNNING changes only through feedback (its `feedback`, `case_id`, `update_time`) and its one
evidence score, so its reply is kept for `ttl` seconds, and every change this process writes drops
the entry once the write has committed: SubmitFeedback, and the in-process evaluation worker after
writing a score (`EvaluationWorker(on_scored=...)`). A reply read from the database while such a
change was being written is not stored (the epoch check in `put`), so it cannot outlive the change.
A change written by another process (another replica's feedback, or its worker scoring a session
that finished here) is visible after at most `ttl` seconds. `ttl` 0 turns the cache off.

Concurrent misses of one session share one read (`load`): when an entry expires under load, one
call reads the trace and the others wait for it, instead of every call reading it at once. A call
joins only a read that began after the session's last invalidation here, so a change this process
wrote is never hidden by a read that started before it.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

Reply = TypeVar("Reply")


class TraceCache(Generic[Reply]):
    """Keyed by session id; values are whatever the front end built from the trace (the gRPC reply,
    kept serialisable as is, so a hit costs no conversion)."""

    def __init__(
        self, ttl_s: float, max_entries: int = 4096, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl_s
        self._clock = clock
        self._max = max_entries
        self._entries: OrderedDict[str, tuple[float, Reply]] = OrderedDict()
        # Every invalidation advances the epoch; `_changed` keeps each session's last one (bounded:
        # `_forgotten` is the newest epoch dropped from it, an upper bound for any session not in it).
        self._epoch = 0
        self._changed: OrderedDict[str, int] = OrderedDict()
        self._forgotten = 0
        # session -> (epoch its read began at, the read's reply)
        self._loading: dict[str, tuple[int, asyncio.Future[Reply]]] = {}

    @property
    def enabled(self) -> bool:
        return self._ttl > 0

    def epoch(self) -> int:
        """Taken before reading a trace from the database; handed back to `put`."""
        return self._epoch

    def get(self, session_id: str) -> Reply | None:
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        if entry[0] < self._clock():
            del self._entries[session_id]
            return None
        return entry[1]

    async def get_or_load(self, session_id: str, load: Callable[[], Awaitable[tuple[Reply, bool]]]) -> Reply:
        """The cached reply, or the one `load` reads (sharing a read already under way). `load`
        returns the reply and whether it may be stored (a RUNNING session's may not)."""
        while True:
            cached = self.get(session_id)
            if cached is not None:
                return cached
            loading = self._loading.get(session_id)
            if loading is None or self._changed.get(session_id, self._forgotten) > loading[0]:
                return await self._load(session_id, load)
            try:
                return await asyncio.shield(loading[1])
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not loading[1].cancelled() or (task is not None and task.cancelling()):
                    raise  # this call was cancelled
                # only the call that was reading was cancelled: read again

    async def _load(self, session_id: str, load: Callable[[], Awaitable[tuple[Reply, bool]]]) -> Reply:
        epoch = self._epoch
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        entry = (epoch, future)
        self._loading[session_id] = entry
        try:
            reply, cacheable = await load()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # the callers waiting for it raise it; nobody need retrieve it here
            raise
        finally:
            if self._loading.get(session_id) is entry:
                del self._loading[session_id]
        if cacheable:
            self.put(session_id, reply, epoch)
        future.set_result(reply)
        return reply

    def put(self, session_id: str, reply: Reply, read_epoch: int) -> None:
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
