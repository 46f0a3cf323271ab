"""query_logs over NDJSON files, streamed, with a partition cache built on first use.

Files are never loaded whole. The first query reads each file once, checks every line, and copies
the lines into one cache file per (service, level) in a temporary directory, keeping a timestamp
and a byte offset per line (16 bytes a line). A service or level query then reads only its
partitions; a keyword is searched as bytes (C speed) before any line is parsed, and a query without
keyword or pattern is answered from the timestamps alone, reading only the lines it returns. A file
whose size or mtime changed is re-indexed.
"""

from __future__ import annotations

import heapq
import json
import re
import tempfile
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from evigate.server.sources.times import display_time
from evigate.server.tools.backend import JSON, LogsQuery, Page, TimeWindow, ToolError

REQUIRED = ("timestamp", "level", "service", "message")
LEVEL_ALIASES = {"WARNING": "WARN", "CRITICAL": "FATAL"}
_CHUNK = 4 * 1024 * 1024
# Bytes that a JSON writer may escape: a keyword containing them cannot be searched as raw bytes.
_UNSAFE = re.compile(r'["\\/\x00-\x1f]')


def parse_timestamp(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"timestamp must be a string, got {type(value).__name__}")
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def normalize_level(value: Any) -> str:
    level = str(value).upper()
    return LEVEL_ALIASES.get(level, level)


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass
class _Partition:
    """One service's lines of one level, copied from one file, with a timestamp and offset per line."""

    path: Path
    order: int  # creation order: ties on timestamp go to the later line
    stamps: array[float] = field(default_factory=lambda: array("d"))
    offsets: array[int] = field(default_factory=lambda: array("Q"))
    size: int = 0
    ascending: bool = True
    has_escapes: bool = False

    def outside(self, window: TimeWindow) -> bool:
        if not self.stamps:
            return True
        first, last = (
            (self.stamps[0], self.stamps[-1]) if self.ascending else (min(self.stamps), max(self.stamps))
        )
        return (window.since is not None and last < window.since.timestamp()) or (
            window.until is not None and first > window.until.timestamp()
        )

    def select(self, window: TimeWindow, limit: int) -> tuple[int, list[int]]:
        """Without text filters: how many lines fall in the window, and the newest `limit` of them."""
        since = window.since.timestamp() if window.since is not None else float("-inf")
        until = window.until.timestamp() if window.until is not None else float("inf")
        if self.ascending:
            lo, hi = bisect_left(self.stamps, since), bisect_right(self.stamps, until)
            return hi - lo, list(range(max(lo, hi - limit), hi))
        inside = [i for i, t in enumerate(self.stamps) if since <= t <= until]
        return len(inside), heapq.nlargest(limit, inside, key=lambda i: (self.stamps[i], i))

    def read(self, line_numbers: list[int]) -> dict[int, JSON]:
        out: dict[int, JSON] = {}
        try:
            with self.path.open("rb") as handle:
                for i in sorted(line_numbers):
                    handle.seek(self.offsets[i])
                    out[i] = json.loads(handle.readline())
        except OSError as exc:
            raise ToolError(f"log cache unreadable: {exc}") from exc
        return out


@dataclass
class _FileIndex:
    stamp: tuple[int, int]
    partitions: dict[tuple[str, str], _Partition] = field(default_factory=dict)  # (service, level)


# A heap entry: (timestamp, partition order, line order, the record or (partition, line number)).
_Entry = tuple[float, int, int, "JSON | tuple[_Partition, int]"]


class LogStore:
    def __init__(self, logs_dir: Path) -> None:
        self._dir = logs_dir
        self._lock = threading.Lock()
        self._indexes: dict[Path, _FileIndex] = {}
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._parts = 0

    def query(self, q: LogsQuery) -> Page:
        needle, lowered = _needle(q.keyword)
        keyword = q.keyword.casefold() if q.keyword else None
        regex = re.compile(q.pattern) if q.pattern else None
        service = q.service.lower() if q.service else None
        heap: list[_Entry] = []
        total = 0

        def offer(entry: _Entry) -> None:
            if len(heap) < q.limit:
                heapq.heappush(heap, entry)
            elif entry[:3] > heap[0][:3]:
                heapq.heapreplace(heap, entry)

        for index in self._current_indexes():
            for (part_service, part_level), part in index.partitions.items():
                if service is not None and part_service != service:
                    continue
                if (q.level is not None and part_level != q.level) or part.outside(q.window):
                    continue
                if keyword is None and regex is None:
                    count, newest = part.select(q.window, q.limit)
                    total += count
                    for i in newest:
                        offer((part.stamps[i], part.order, i, (part, i)))
                    continue
                use = (
                    needle if needle is not None and not (part.has_escapes and not needle.isascii()) else None
                )
                for seq, raw in enumerate(_candidates(part.path, use, lowered)):
                    record = json.loads(raw)
                    moment = parse_timestamp(record["timestamp"])
                    if not q.window.contains(moment):
                        continue
                    text = _search_text(record)
                    if keyword is not None and keyword not in text.casefold():
                        continue
                    if regex is not None and not regex.search(text):
                        continue
                    total += 1
                    offer((moment.timestamp(), part.order, seq, record))
        return Page([shape_log(record) for record in _materialize(heap)], total)

    def services(self) -> list[str]:
        """The services the log files hold (for the service catalog)."""
        return sorted({service for index in self._current_indexes() for service, _ in index.partitions})

    def _current_indexes(self) -> list[_FileIndex]:
        if not self._dir.is_dir():
            raise ToolError(f"log data unavailable: {self._dir} is not a directory")
        files = sorted(self._dir.glob("*.ndjson"))
        out = []
        with self._lock:
            for path in files:
                try:
                    stat = path.stat()
                except OSError as exc:
                    raise ToolError(f"cannot read {path.name}: {exc}") from exc
                stamp = (stat.st_size, stat.st_mtime_ns)
                index = self._indexes.get(path)
                if index is None or index.stamp != stamp:
                    index = self._build(path, stamp)
                    self._indexes[path] = index
                out.append(index)
        return out

    def _build(self, path: Path, stamp: tuple[int, int]) -> _FileIndex:
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="evigate-logs-")
        index = _FileIndex(stamp)
        handles: dict[tuple[str, str], BinaryIO] = {}
        try:
            with path.open("rb") as source:
                for number, line in enumerate(source, start=1):
                    if not line.strip():
                        continue
                    service, level, moment = _check_line(path.name, number, line)
                    key = (service.lower(), level)
                    part = index.partitions.get(key)
                    if part is None:
                        self._parts += 1
                        part = _Partition(Path(self._tmp.name) / f"{self._parts}.ndjson", self._parts)
                        index.partitions[key] = part
                        handles[key] = part.path.open("wb")
                    data = line if line.endswith(b"\n") else line + b"\n"
                    handles[key].write(data)
                    if part.stamps and moment < part.stamps[-1]:
                        part.ascending = False
                    part.stamps.append(moment)
                    part.offsets.append(part.size)
                    part.size += len(data)
                    part.has_escapes = part.has_escapes or b"\\u" in line
        except OSError as exc:
            raise ToolError(f"cannot read {path.name}: {exc}") from exc
        finally:
            for handle in handles.values():
                handle.close()
        return index


def _materialize(heap: list[_Entry]) -> list[JSON]:
    """Newest first; lines chosen from the arrays alone are read from their partition now."""
    entries = sorted(heap, key=lambda e: e[:3], reverse=True)
    wanted: dict[int, tuple[_Partition, list[int]]] = {}
    for *_, ref in entries:
        if isinstance(ref, tuple):
            wanted.setdefault(id(ref[0]), (ref[0], []))[1].append(ref[1])
    loaded = {(key, i): rec for key, (part, lines) in wanted.items() for i, rec in part.read(lines).items()}
    return [ref if isinstance(ref, dict) else loaded[(id(ref[0]), ref[1])] for *_, ref in entries]


def _check_line(name: str, number: int, line: bytes) -> tuple[str, str, float]:
    """The line's service, level and epoch timestamp; ToolError naming file and line when corrupt."""
    where = f"{name} line {number}"
    try:
        record = json.loads(line)
    except ValueError as exc:  # includes invalid UTF-8
        raise ToolError(f"corrupt log data: {where}: invalid JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise ToolError(f"corrupt log data: {where}: not a JSON object")
    missing = [k for k in REQUIRED if not isinstance(record.get(k), str)]
    if missing:
        raise ToolError(f"corrupt log data: {where}: missing or non-string {', '.join(missing)}")
    try:
        moment = parse_timestamp(record["timestamp"]).timestamp()
    except ValueError as exc:
        raise ToolError(f"corrupt log data: {where}: bad timestamp ({exc})") from exc
    return str(record["service"]), normalize_level(record["level"]), moment


def _needle(keyword: str | None) -> tuple[bytes | None, bool]:
    """The bytes to pre-filter lines with, and whether the haystack must be ASCII-lowercased."""
    if keyword is None or _UNSAFE.search(keyword):
        return None, False
    if keyword.isascii():
        return keyword.lower().encode(), True
    if keyword.lower() == keyword.upper():  # no letter case (e.g. Chinese): raw UTF-8 bytes
        return keyword.encode(), False
    return None, False


def _candidates(path: Path, needle: bytes | None, lowered: bool) -> Iterator[bytes]:
    """Lines of a partition that may match: all of them, or those containing the needle."""
    for block in _blocks(path):
        if needle is None:
            yield from block.splitlines()
            continue
        hay = block.lower() if lowered else block
        pos = hay.find(needle)
        while pos != -1:
            start = block.rfind(b"\n", 0, pos) + 1
            end = block.find(b"\n", pos)
            end = len(block) if end == -1 else end
            yield block[start:end]
            pos = hay.find(needle, end)


def _blocks(path: Path) -> Iterator[bytes]:
    try:
        with path.open("rb") as handle:
            carry = b""
            while chunk := handle.read(_CHUNK):
                buf = carry + chunk
                cut = buf.rfind(b"\n") + 1
                carry = buf[cut:]
                if cut:
                    yield buf[:cut]
            if carry:
                yield carry
    except OSError as exc:
        raise ToolError(f"log cache unreadable: {exc}") from exc


def _search_text(record: JSON) -> str:
    extras = [str(_scalar(v)) for k, v in record.items() if k not in ("timestamp", "level", "service")]
    return " ".join(extras)


def shape_log(record: JSON) -> JSON:
    """The raw_result item: required fields first (timestamp in display form), then the extras."""
    item: JSON = {
        "timestamp": display_time(parse_timestamp(record["timestamp"])),
        "level": str(record["level"]).upper(),
        "service": record["service"],
        "message": record["message"],
    }
    for key, value in record.items():
        if key not in item and value is not None:
            item[str(key)] = _scalar(value)
    return item
