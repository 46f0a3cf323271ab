"""The whole log tree indexed in the background from start-up.

The work runs in a daemon thread (CPU-bound parsing, off the event loop) that checks a stop flag
between chunks of a few megabytes, so `stop()` returns within a bounded time; a thread that does
not answer in time (a hung file system) is left to end with the process. Meanwhile queries are
answered by what is indexed, by scanning (scan.py), or by indexing the files they need first. The
progress (files and MB done, percent, time left) goes to the service log every `log_every_s`, to
the store (for `evigate sources`) and to the health entry of the log source."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from evigate.server.queries.types import ToolError

from .search import LogReader
from .tree import Progress

log = logging.getLogger("evigate.logs.index")


@dataclass(frozen=True)
class IndexHealth:
    """What the health check and `evigate sources` show for the log source."""

    ready: bool  # queries are answered (the index may still be building)
    detail: str


class IndexBuild:
    name = "logs"

    def __init__(
        self,
        reader: LogReader,
        *,
        log_every_s: float = 10.0,
        stop_within_s: float = 5.0,
        on_ready: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.reader = reader
        self._log_every_s, self._stop_within_s = log_every_s, stop_within_s
        self._on_ready = on_ready
        self._stop = threading.Event()
        self._done: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def progress(self) -> Progress:
        return self.reader.progress

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._done = done = asyncio.Event()

        def work() -> None:
            try:
                self.reader.build_all(self._stop.is_set)
            except Exception as error:  # a bug must not take the service down: queries index on demand
                log.exception("log index build failed")
                self.reader.progress.state, self.reader.progress.error = "failed", str(error)
            finally:
                with contextlib.suppress(RuntimeError):  # the loop closed first
                    loop.call_soon_threadsafe(done.set)

        threading.Thread(target=work, name="evigate-log-index", daemon=True).start()
        self._task = asyncio.create_task(self._watch(done), name="evigate-log-index")

    async def _watch(self, done: asyncio.Event) -> None:
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self._log_every_s)
            if not done.is_set():
                self._report("log index progress")
        self._report("log index built" if self.progress.state == "ready" else "log index build ended")
        if self.progress.state == "ready" and self._on_ready is not None:
            await self._on_ready()

    def _report(self, message: str) -> None:
        progress = self.progress.as_dict()
        log.info(message, extra={"root": str(self.reader.config.root), **progress})
        store = self.reader.tree.store
        if store is not None:
            store.save_progress({**progress, "detail": self.progress.describe(), "at": time.time()})

    def request_stop(self) -> None:
        """The thread stops after the chunk it is reading."""
        self._stop.set()

    async def stop(self) -> None:
        """Asks the thread to stop and waits for it at most `stop_within_s`."""
        self.request_stop()
        if self._done is not None and not self._done.is_set():
            try:
                await asyncio.wait_for(self._done.wait(), self._stop_within_s)
            except TimeoutError:
                log.warning("log index build did not stop in time; it ends with the process")
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def health(self) -> IndexHealth:
        progress = self.progress
        return IndexHealth(ready=progress.state != "failed", detail=progress.describe())


def stored_state(reader: LogReader, fresh_s: float = 60.0) -> tuple[IndexHealth, dict[str, object]]:
    """What `evigate sources` (another process than the service) says of the log index: the
    running build's last progress when it is recent, else how much of the tree the index on disk
    covers. Reads, never builds."""
    try:
        entries = [e for e in reader.tree.files() if e.identity is not None]
    except ToolError as error:
        return IndexHealth(False, str(error)), {}
    store = reader.tree.store
    if store is not None and not store.path.exists():
        store = None  # never indexed here: nothing to read, and nothing to create
    progress = store.load_progress() if store is not None else None
    if progress is not None and progress.get("state") == "building":
        age = time.time() - float(str(progress.get("at", 0)))
        if age <= fresh_s:
            return IndexHealth(True, f"{progress.get('detail')} ({age:.0f} s ago)"), progress
    stored = store.identities() if store is not None else {}
    covered = [e for e in entries if stored.get(e.member.rel) == json.dumps(e.identity)]
    state = Progress(
        "ready" if len(covered) == len(entries) else "partial",
        files_total=len(entries),
        files_done=len(covered),
        bytes_total=sum(e.identity[2] for e in entries if e.identity is not None),
        bytes_done=sum(e.identity[2] for e in covered if e.identity is not None),
    )
    where = f"index on disk at {store.path}" if store is not None else "no index on disk"
    detail = f"{where}: {state.files_done}/{state.files_total} files, {state.percent:.0f}% of the bytes"
    return IndexHealth(True, detail), state.as_dict()
