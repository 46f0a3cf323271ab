"""A keyword query over a file that is not indexed yet: the file's bytes are searched in chunks
for the keyword (its ASCII letters in any case, as the index path searches its blocks; finder.py),
and only the events
holding a hit are cut out and parsed, with the same parse the index path uses on the same bytes.
So the events found, their times and their order are those the index would give, at the cost of
a byte search plus one parse per matching event (`bench/bench_logs.py` compares it with grep -F).

A file is scanned only when raw bytes cannot miss a match: no container wrapper (whose partial
records may split a line), and for JSON and logfmt, whose writers escape text and whose records
without a message field are read as `k=v` pairs, only a keyword without characters writers escape,
space or `=`, and ASCII unless it has no letter case. Any other file is indexed first."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

from .event_parser import EventParser, Pending
from .events import LogEvent
from .file_index import empty
from .finder import Finder, newlines
from .log_config import LogConfig
from .reader import GZIP_ERRORS, FileFormat, open_member, raw_lines
from .tree import Entry

CHUNK = 8 * 2**20
GZIP_RATIO = 8  # what text logs commonly shrink to: a .gz is weighed by the text it holds
MAX_HELD = 64 * 2**20  # bytes held back waiting for an event's end: beyond it, index the file
# Characters JSON and logfmt writers escape: a keyword containing one is not searched as raw bytes.
ESCAPED_BY_WRITERS = re.compile(r'["\\/<>&\'\x00-\x1f]')
# (epoch seconds, file order, offset of the event in the file, its index number or -1, the event:
# None when the index alone chose it, Pending when a scan read it as far as the filters look)
Hit = tuple[float, int, int, int, LogEvent | Pending | None]


class ScanError(Exception):
    """The file could not be scanned to its end (a truncated stream, an event too long to hold)."""


def needle(
    keyword: str, file_format: FileFormat, *, joined: bool, composed: bool, escaped: bool
) -> tuple[bytes | None, bool]:
    """The bytes to find before parsing, and whether the text must be ASCII-lowercased first;
    None when raw bytes could miss a match (escapes, a line split by the container runtime, a
    message composed of fields)."""
    if joined or (composed and ("=" in keyword or " " in keyword)):
        return None, False
    escaping = file_format.container == "docker" or file_format.name in ("json", "logfmt")
    if escaping and (ESCAPED_BY_WRITERS.search(keyword) or (escaped and not keyword.isascii())):
        return None, False
    if keyword.isascii():
        return keyword.lower().encode(), True
    if keyword.lower() == keyword.upper():  # no letter case (Chinese): its UTF-8 bytes as they are
        return keyword.encode(), False
    return None, False


@dataclass(frozen=True)
class Scan:
    entry: Entry
    parser: EventParser
    compressed: bool
    finder: Finder

    @property
    def parsers(self) -> str:
        return self.parser.file_format.parser


def plan(entry: Entry, config: LogConfig, keyword: str) -> Scan | None:
    """How to scan the file for the keyword; None when it must be indexed first: a small file
    (config.scan_from_bytes), a file raw bytes could miss a match in (see above), or one that
    holds no event at all (its index then says which lines could not be read)."""
    if entry.identity is None:
        return None
    index = empty(entry.source, entry.member, config, entry.identity)
    if entry.identity[2] * (GZIP_RATIO if index.compressed else 1) < config.scan_from_bytes:
        return None
    file_format = index.file_format
    if file_format.container:
        return None
    # Unknown before the whole file is read: assume the worst of JSON and logfmt.
    escaping = file_format.name in ("json", "logfmt")
    found, lowered = needle(keyword, file_format, joined=False, composed=escaping, escaped=escaping)
    if found is None:
        return None
    parser = EventParser(entry.source, entry.member.rel, file_format, config)
    try:
        with open_member(entry.member.path, index.compressed) as handle:
            if not any(parser.starts(raw.rstrip(b"\n")) for _, _, raw in raw_lines(handle)):
                return None
    except GZIP_ERRORS:
        return None
    return Scan(entry, parser, index.compressed, Finder(found, lowered))


def hits(scan: Scan, keeps: Callable[[Pending], bool]) -> Iterator[Hit]:
    """The file's events that hold the needle and that `keeps`, in file order. ScanError when
    the file cannot be read to its end this way (the caller indexes it instead).

    The file is read into one buffer, a chunk at a time, behind the bytes held back from the
    chunk before (the last event, whose end may be in the next chunk)."""
    starts = scan.parser.starts
    order = scan.entry.order
    buf = bytearray(CHUNK)
    held, base, line = 0, 0, 1  # bytes held at the buffer's front; where its first byte is in the file
    try:
        with open_member(scan.entry.member.path, scan.compressed) as handle:
            while True:
                if len(buf) < held + CHUNK:
                    if held > MAX_HELD:
                        raise ScanError("an event longer than the scan holds")
                    buf.extend(bytes(held + CHUNK - len(buf)))
                with memoryview(buf) as view:
                    got = cast("io.BufferedIOBase", handle).readinto(view[held : held + CHUNK])
                size = held + got
                limit = size if not got else _last_start(buf, size, starts)
                if got and limit <= 0:  # no event begins after the first: keep reading
                    held = size
                    continue
                for offset, event in _region(scan, buf, limit, (base, line)):
                    if keeps(event):
                        yield (event.draft.timestamp.timestamp(), order, offset, -1, event)
                if not got:
                    return
                line += newlines(buf, 0, limit)
                base += limit
                held = size - limit
                buf[:held] = buf[limit:size]
    except GZIP_ERRORS as exc:
        raise ScanError(str(exc)) from exc


def _line_at(buf: bytearray, start: int, stop: int) -> bytes:
    end = buf.find(b"\n", start, stop)
    return bytes(buf[start:stop] if end == -1 else buf[start:end])


def _last_start(buf: bytearray, size: int, starts: Callable[[bytes], bool]) -> int:
    """Where the last event that begins in buf[:size] after its first line begins (its end may
    still be to come); 0 when none does."""
    end = buf.rfind(b"\n", 0, size) + 1
    if end == 0:
        return 0
    at = buf.rfind(b"\n", 0, end - 1) + 1
    while at > 0:
        if starts(_line_at(buf, at, end)):
            return at
        at = buf.rfind(b"\n", 0, at - 1) + 1
    return 0


def _next_start(buf: bytearray, start: int, limit: int, starts: Callable[[bytes], bool]) -> int:
    """Where the event beginning at `start` ends: the next line that starts one, or `limit`."""
    at = buf.find(b"\n", start, limit)
    while at != -1 and at + 1 < limit:
        at += 1
        if starts(_line_at(buf, at, limit)):
            return at
        at = buf.find(b"\n", at, limit)
    return limit


def _region(scan: Scan, buf: bytearray, limit: int, at: tuple[int, int]) -> Iterator[tuple[int, Pending]]:
    """The events of buf[:limit] holding the needle, with their offsets in the file; `at` is the
    offset and line number of the buffer's first byte. Each is cut from its first line to the
    next event's and parsed alone, as the index path cuts and parses it."""
    starts = scan.parser.starts
    base, counted = at
    counted_at = resume = 0  # where lines were counted up to; where the last event read ends
    for pos in scan.finder.starts(buf, 0, limit):
        if pos < resume:  # in the event just read
            continue
        start = buf.rfind(b"\n", 0, pos) + 1
        while not starts(_line_at(buf, start, limit)):  # the event this line belongs to, if any
            if start == 0:
                start = -1
                break
            start = buf.rfind(b"\n", 0, start - 1) + 1
        if start < 0:  # before the first event: a line no event owns
            resume = buf.find(b"\n", pos, limit) + 1 or limit
            continue
        resume = _next_start(buf, start, limit, starts)
        counted += newlines(buf, counted_at, start)
        counted_at = start
        event = scan.parser.pending(bytes(buf[start:resume]), counted, base + start)
        if event is not None:
            yield base + start, event
