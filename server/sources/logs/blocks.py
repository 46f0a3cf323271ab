"""Events appended to a file's index a line (or a run of lines) at a time, and cut into blocks of up
to `block_events` events, none spanning more than MAX_SPAN bytes nor a gap of unreadable bytes
wider than MAX_GAP: what both the batch indexer (batch.py) and the line-by-line one
(file_index.build_lines) write through."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .log_config import LogConfig

if TYPE_CHECKING:
    from .file_index import FileIndex

# A block never spans more than this, nor a gap of unreadable bytes wider than MAX_GAP between two
# of its events: a query reads whole blocks, and garbage must not make one huge.
MAX_SPAN = 16 * 2**20
MAX_GAP = 2**20


@dataclass(frozen=True)
class Columns:
    """Events in columns, one per line, in file order."""

    offsets: list[int]
    starts: np.ndarray  # the offsets again, for arithmetic by whole runs
    lines: list[int]
    stamps: list[float]
    levels: list[int]
    services: list[int]
    ends: list[int]

    def cut(self, start: int, stop: int) -> Columns:
        part = slice(start, stop)
        return Columns(self.offsets[part], self.starts[part], self.lines[part], self.stamps[part],
                       self.levels[part], self.services[part], self.ends[part])  # fmt: skip

    def event(self, i: int) -> Event:
        return Event(
            self.offsets[i], self.lines[i], self.stamps[i], self.levels[i], self.services[i], self.ends[i]
        )


@dataclass(slots=True)
class Event:
    """What the index keeps of an event: where it starts, its time, level and service codes, where
    its last line ends."""

    offset: int
    line: int
    stamp: float
    level: int
    service: int
    end: int


class Events:
    """Appends events to a FileIndex and cuts its blocks (of up to `block_events` events)."""

    def __init__(self, index: FileIndex, config: LogConfig) -> None:
        self.index = index
        self._block_events = config.block_events
        self.codes: dict[str, int] = {}  # service name → code
        self._first = 0  # the open block's first event, its start offset; the last event's end
        self._start = 0
        self._prev_end = 0

    def service_code(self, service: str) -> int:
        code = self.codes.get(service)
        if code is None:
            index = self.index
            code = self.codes[service] = len(self.codes)
            index.service_names.append(service)
            if code == 2**16 and index.services.typecode == "H":  # a field that names no service
                index.services = array("I", index.services)
        return code

    def add(self, event: Event) -> None:
        index, offset = self.index, event.offset
        count = len(index.stamps)
        first = self._first
        if count > first and (
            count - first >= self._block_events
            or offset - self._prev_end > MAX_GAP
            or offset - self._start > MAX_SPAN
        ):
            index.close_block((first, count), (self._start, self._prev_end))
            first = self._first = count
        if count == first:
            self._start = offset
        index.starts.append(offset - self._start)
        index.lines.append(event.line)
        index.stamps.append(event.stamp)
        index.levels.append(event.level)
        index.services.append(event.service)
        self._prev_end = event.end

    def extend(self, events: Columns) -> None:
        """Appends events one line each, consecutive in the file (no gap between them): what add()
        does for each, a block at a time."""
        index, offsets = self.index, events.offsets
        at, count = 0, len(index.stamps)
        while at < len(offsets):
            first, offset = self._first, offsets[at]
            if count > first and (
                count - first >= self._block_events
                or offset - self._prev_end > MAX_GAP
                or offset - self._start > MAX_SPAN
            ):
                index.close_block((first, count), (self._start, self._prev_end))
                first = self._first = count
            if count == first:
                self._start = offset
            room = min(len(offsets), at + self._block_events - (count - first))
            end = max(at + 1, bisect_right(offsets, self._start + MAX_SPAN, at, room))
            index.starts.extend((events.starts[at:end] - self._start).tolist())
            index.lines.extend(events.lines[at:end])
            index.stamps.extend(events.stamps[at:end])
            index.levels.extend(events.levels[at:end])
            index.services.extend(events.services[at:end])
            self._prev_end = events.ends[end - 1]
            count += end - at
            at = end

    def finish(self) -> None:
        if self.index.count > self._first:
            self.index.close_block((self._first, self.index.count), (self._start, self._prev_end))
