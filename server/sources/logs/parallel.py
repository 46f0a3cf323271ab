"""The background build's files spread over worker processes, one per core.

Indexing is CPU-bound Python: in one thread it reads at most one core's worth, and it holds the
interpreter lock that the service's queries need meanwhile. Here each worker (a spawned process)
indexes whole files with `file_index.build` and sends each index back as the store writes it
(`store.dump`): the caller restores it, keeps it and saves it, so an index is the one the
service's own thread would have built. After each chunk a worker says how many bytes of its file
it has read, for the progress, and looks at the build's stop flag: stopping takes at most a chunk
(4 MB), and workers write nothing, so nothing is left half done. While the service answers a
query, the workers wait after their chunk (`pause`): the query has the cores and the disk. When
the workers cannot start (a program whose main module starts a build when imported), the caller
reads the files itself."""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from .file_index import build
from .layouts import LogSource, Member
from .log_config import LogConfig
from .store import Identity, dump

_POLL_S = 0.1  # how often the caller looks at `stop` and at the progress while the workers read

# A file's index as the store writes it (its identity, header and arrays), or why it was unreadable.
Result = tuple[Identity, dict[str, Any], bytes] | str

_config: LogConfig | None = None  # set in each worker by _start
_progress: Any = None
_stop: Any = None
_running: Any = None  # cleared: paused


def worker_count(config: LogConfig) -> int:
    if config.index_workers > 0:
        return config.index_workers
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _start(config: LogConfig, progress: Any, stop: Any, running: Any) -> None:
    global _config, _progress, _stop, _running
    _config, _progress, _stop, _running = config, progress, stop, running


def _build(number: int, source: LogSource, member: Member) -> Result | None:
    """A file's index as the store writes it; None when stopped."""
    assert _config is not None

    def advance(done: int) -> None:
        _progress.put((number, done))

    try:
        index = build(source, member, _config, _stopped, advance)
    except OSError as exc:
        return exc.strerror or str(exc)
    if index is None:
        return None
    header, arrays = dump(index)
    return index.stamp, header, arrays


def _stopped() -> bool:
    """Between two chunks: waits while paused; whether to stop."""
    while not _running.wait(_POLL_S):
        if _stop.is_set():
            return True
    return bool(_stop.is_set())


class Workers:
    """A pool of worker processes for one build; `close()` it (a `with` block does)."""

    def __init__(self, config: LogConfig, count: int) -> None:
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
        self._progress = context.Queue()
        self._stop, self._running = context.Event(), context.Event()
        self._running.set()
        initargs = (config, self._progress, self._stop, self._running)
        self._pool = ProcessPoolExecutor(count, context, _start, initargs)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        files: list[tuple[LogSource, Member]],
        stop: Callable[[], bool],
        progress: Callable[[int, int], None],
    ) -> Iterator[tuple[int, Result]]:
        """Each file's number (its place in `files`) and result, as the workers finish them;
        `progress` hears (number, bytes read) meanwhile. Ends early when `stop` says so. Raises
        BrokenProcessPool when the workers could not start or died."""
        pending: dict[Future[Result | None], int] = {
            self._pool.submit(_build, number, source, member): number
            for number, (source, member) in enumerate(files)
        }
        while pending:
            finished, _ = wait(pending, _POLL_S, FIRST_COMPLETED)
            self._report(progress)
            if stop():
                return
            for future in finished:
                number = pending.pop(future)
                result = future.result()
                if result is not None:
                    yield number, result

    def _report(self, progress: Callable[[int, int], None]) -> None:
        while True:
            try:
                number, done = self._progress.get_nowait()
            except queue.Empty:
                return
            progress(number, done)

    def pause(self) -> None:
        """The workers wait after their chunk until `resume()`."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def close(self) -> None:
        """Tells the workers to stop after their chunk, and waits for them."""
        self._stop.set()
        self._running.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._progress.close()
        self._progress.join_thread()
