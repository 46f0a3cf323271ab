"""The files of one log tree and their indexes: found by walking the tree, kept in memory, read
back from the store on disk when their identity (device, inode, size, mtime) has not changed,
else built, by a query that needs one or by the background build, which indexes the whole tree
and reports its progress."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from evigate.server.queries.types import ToolError

from .file_index import FileIndex, build, empty, identity, mentions
from .layouts import LogSource, Member, discover
from .log_config import LogConfig
from .parallel import Workers, worker_count
from .store import Identity, IndexStore, Saved, restore

log = logging.getLogger("evigate.logs.index")
_MB = 2**20
_STOP_CHECK_S = 0.05  # how often a build waiting for queries to end looks whether it was stopped


@dataclass(frozen=True)
class Entry:
    """One file of the tree, in the order queries number them (ties between files of equal time
    go to the later one)."""

    order: int
    source: LogSource
    member: Member
    identity: Identity | None  # None: the file could not be read (`error` says why)
    error: str = ""

    @cached_property
    def key(self) -> str:  # asked of every file by every query
        return str(self.member.path)


@dataclass
class Progress:
    """How far the tree's indexing has come: files and bytes done of all, and a time estimate."""

    state: str = "idle"  # idle, building, ready, stopped, failed
    files_total: int = 0
    files_done: int = 0
    bytes_total: int = 0
    bytes_done: int = 0
    bytes_built: int = 0  # of bytes_done, those read in this run (not restored from the store)
    started: float = 0.0  # time.monotonic()
    elapsed_s: float = 0.0
    error: str = ""

    @property
    def percent(self) -> float:
        return 100.0 if not self.bytes_total else 100.0 * self.bytes_done / self.bytes_total

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate of this run so far; None before anything was read."""
        if self.state != "building" or not self.bytes_built:
            return None
        elapsed = time.monotonic() - self.started
        return (self.bytes_total - self.bytes_done) * elapsed / self.bytes_built

    def describe(self) -> str:
        megabytes = f"{self.bytes_done / _MB:.0f}/{self.bytes_total / _MB:.0f} MB"
        done = f"{self.files_done}/{self.files_total} files, {megabytes}"
        if self.state == "building":
            eta = self.eta_s
            left = f", about {eta:.0f} s left" if eta is not None else ""
            return f"indexing: {done} ({self.percent:.0f}%){left}"
        if self.state == "ready":
            return f"index ready: {done} in {self.elapsed_s:.1f} s"
        if self.state == "failed":
            return f"index build failed ({self.error}): {done}"
        return f"index {self.state}: {done}"

    def as_dict(self) -> dict[str, object]:
        eta = self.eta_s
        return {
            "state": self.state,
            "files_done": self.files_done,
            "files_total": self.files_total,
            "mb_done": round(self.bytes_done / _MB, 1),
            "mb_total": round(self.bytes_total / _MB, 1),
            "percent": round(self.percent, 1),
            "eta_s": None if eta is None else round(eta, 1),
        }


@dataclass
class LogTree:
    """Holds the indexes of one tree; safe to share between threads."""

    config: LogConfig
    store: IndexStore | None = None
    progress: Progress = field(default_factory=Progress)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[str, FileIndex] = {}
        self._building: dict[str, threading.Lock] = {}
        # (file, identity) → services whose names its bytes do not contain
        self._absent: dict[tuple[str, Identity], set[str]] = {}
        self._found: list[Entry] | None = None  # a static tree's files, as first found
        self._queries = 0  # queries running
        self._idle = threading.Condition(self._lock)  # notified when the last query ends
        self._workers: Workers | None = None  # the background build's, while it runs

    def files(self) -> list[Entry]:
        if self._found is not None:
            return self._found
        root = self.config.root
        if not root.is_dir():
            raise ToolError(f"log data unavailable: {root} is not a directory")
        entries: list[Entry] = []
        for source in discover(self.config):
            for member in source.members:
                try:
                    entries.append(Entry(len(entries), source, member, identity(member.path)))
                except OSError as exc:
                    entries.append(Entry(len(entries), source, member, None, exc.strerror or str(exc)))
        if not entries:
            raise ToolError(f"log data unavailable: no log files under {root}")
        with self._lock:
            seen = {entry.key for entry in entries}
            for gone in set(self._indexes) - seen:
                del self._indexes[gone]
        if self.config.static:
            self._found = entries
        return entries

    @contextmanager
    def querying(self) -> Iterator[None]:
        """Around a query: the background build's worker processes wait after their chunk until no
        query runs, so that the query has the cores and the disk."""
        with self._lock:
            self._queries += 1
            if self._workers is not None:
                self._workers.pause()
        try:
            yield
        finally:
            with self._lock:
                self._queries -= 1
                if not self._queries:
                    self._idle.notify_all()
                    if self._workers is not None:
                        self._workers.resume()

    def held(self) -> int:
        """How many files' indexes are in memory."""
        with self._lock:
            return len(self._indexes)

    def ready(self, entry: Entry) -> FileIndex | None:
        """The file's index if it is current in memory or in the store; never builds."""
        with self._lock:
            index = self._indexes.get(entry.key)
        if index is not None and index.stamp == entry.identity:
            return index
        if self.store is None or entry.identity is None:
            return None
        saved = self.store.load(entry.member.rel, entry.identity)
        if saved is None:
            return None
        try:
            index = empty(entry.source, entry.member, self.config, entry.identity)
        except OSError:
            return None
        if not restore(index, saved):
            return None
        with self._lock:
            self._indexes[entry.key] = index
        return index

    def index(
        self,
        entry: Entry,
        stop: Callable[[], bool] | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> FileIndex | None:
        """The file's index, built now if needed (one build per file at a time); None when stopped.
        OSError propagates."""
        with self._lock:
            building = self._building.setdefault(entry.key, threading.Lock())
        with building:
            index = self.ready(entry)
            if index is not None:
                return index
            index = build(entry.source, entry.member, self.config, stop, progress)
            if index is None:
                return None
            with self._lock:
                self._indexes[entry.key] = index
            if self.store is not None:
                self.store.save(entry.member.rel, index.stamp, index)
            return index

    def may_hold(self, entry: Entry, service: str) -> bool:
        """Whether the file may hold events of the service: its place in the tree names it, or its
        bytes contain the name (a scan at grep speed, remembered per file identity)."""
        wanted = service.lower()
        if entry.source.service.lower() == wanted or entry.identity is None:
            return True
        absent = self._absent.setdefault((entry.key, entry.identity), set())
        if wanted in absent:
            return False
        if mentions(entry.member.path, wanted):
            return True
        absent.add(wanted)
        return False

    def build_all(self, stop: Callable[[], bool]) -> Progress:
        """Indexes every file of the tree (what the store holds is read back), newest stream
        members last as discovered; returns when done or when `stop` says so. A tree with much to
        read is read by worker processes (parallel.py), else in this thread."""
        progress = self.progress = Progress("building", started=time.monotonic())
        try:
            entries = [e for e in self.files() if e.identity is not None]
        except ToolError as error:
            progress.state, progress.error = "failed", str(error)
            return progress
        progress.files_total = len(entries)
        progress.bytes_total = sum(_size(e) for e in entries)
        todo: list[Entry] = []
        for entry in entries:
            if stop():
                progress.state = "stopped"
                return progress
            if self.ready(entry) is None:
                todo.append(entry)
            else:
                progress.files_done += 1
                progress.bytes_done += _size(entry)
        workers = min(worker_count(self.config), len(todo))
        finished = None
        if workers > 1 and sum(map(_size, todo)) >= self.config.parallel_from_bytes:
            finished = self._build_apart(todo, stop, workers)
        if finished is None:  # no workers: what they did not index is indexed here
            finished = self._build_here([e for e in todo if self.ready(e) is None], stop)
        if not finished:
            progress.state = "stopped"
            return progress
        if self.store is not None:
            self.store.keep_only({e.member.rel for e in entries})
        progress.state, progress.elapsed_s = "ready", time.monotonic() - progress.started
        return progress

    def _build_here(self, todo: list[Entry], stop: Callable[[], bool]) -> bool:
        """Indexes the files in this thread; False when stopped."""
        progress = self.progress
        for entry in todo:
            if stop():
                return False
            before, built_before = progress.bytes_done, progress.bytes_built

            def advance(done: int, before: int = before, built_before: int = built_before) -> None:
                progress.bytes_done, progress.bytes_built = before + done, built_before + done

            try:
                index = self.index(entry, stop, advance)
            except OSError as exc:
                log.warning("log file unreadable", extra={"file": entry.member.rel, "error": str(exc)})
                index = None
            if index is None and stop():
                return False
            progress.files_done += 1
            progress.bytes_done, progress.bytes_built = before + _size(entry), built_before + _size(entry)
        return True

    def _build_apart(self, todo: list[Entry], stop: Callable[[], bool], workers: int) -> bool | None:
        """Indexes the files in worker processes, keeping and saving each index as it comes back;
        False when stopped, None when the workers could not start or died."""
        progress = self.progress
        reading: dict[int, int] = {}  # bytes read so far of the files the workers are on
        done_before, built_before = progress.bytes_done, progress.bytes_built
        done: set[int] = set()
        finished = 0  # bytes of the files done

        def update() -> None:
            now = finished + sum(reading.values())
            progress.bytes_done, progress.bytes_built = done_before + now, built_before + now

        def advance(number: int, read: int) -> None:
            if number not in done:  # a worker's last word may come after its result
                reading[number] = read
                update()

        with self._idle:  # the workers start (import, read) once no query runs
            while self._queries:
                if stop():
                    return False
                self._idle.wait(_STOP_CHECK_S)
        try:
            with Workers(self.config, workers) as pool, self._lent(pool):
                for number, result in pool.run([(e.source, e.member) for e in todo], stop, advance):
                    entry = todo[number]
                    if isinstance(result, str):
                        log.warning("log file unreadable", extra={"file": entry.member.rel, "error": result})
                    else:
                        self._keep(entry, *result)
                    done.add(number)
                    reading.pop(number, None)
                    finished += _size(entry)
                    progress.files_done += 1
                    update()
        except BrokenProcessPool as error:
            log.warning("log index workers failed: indexing in this thread", extra={"error": str(error)})
            reading.clear()
            update()
            return None
        return len(done) == len(todo)

    @contextmanager
    def _lent(self, workers: Workers) -> Iterator[None]:
        """The workers, paused and resumed by queries (querying) while the build runs."""
        with self._lock:
            self._workers = workers
            if self._queries:
                workers.pause()
        try:
            yield
        finally:
            with self._lock:
                self._workers = None

    def _keep(self, entry: Entry, stamp: Identity, header: dict[str, Any], arrays: bytes) -> None:
        """Holds (and saves) an index a worker built, unless a query built it meanwhile."""
        with self._lock:
            held = self._indexes.get(entry.key)
        if held is not None and held.stamp == stamp:
            return
        try:
            index = empty(entry.source, entry.member, self.config, stamp)
        except OSError:  # gone since: whoever needs it finds out
            return
        if not restore(index, Saved(header, arrays)):
            return
        with self._lock:
            self._indexes[entry.key] = index
        if self.store is not None:
            self.store.save_dumped(entry.member.rel, stamp, header, arrays)


def _size(entry: Entry) -> int:
    return entry.identity[2] if entry.identity is not None else 0
