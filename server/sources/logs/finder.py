"""Where a keyword's bytes occur in a buffer, ASCII letters in any case, found by Hyperscan's
literal matcher: several gigabytes a second, on the buffer as it is (lowercasing a copy first cost
more than grep's whole search). Bytes outside ASCII are compared as they are, which is what
`bytes.lower()` on both sides gave. Also the count of newlines in a stretch of a buffer, at
memory speed."""

from __future__ import annotations

from typing import cast

import hyperscan
import numpy as np

_SLICE = 2**18  # newlines are counted a slice at a time: the comparison's mask stays in cache


def _note(_id: int, _start: int, end: int, _flags: int, found: object) -> None:
    cast("list[int]", found).append(end)


def _stop(_id: int, _start: int, _end: int, _flags: int, _context: object) -> bool:
    return True  # the first match answers: Hyperscan stops scanning


class Finder:
    """One keyword's matcher; a query makes its own (a compiled literal costs a fraction of a
    millisecond), since one must not scan from two threads at once."""

    def __init__(self, needle: bytes, caseless: bool) -> None:
        self.needle = needle
        self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        flags = hyperscan.HS_FLAG_CASELESS if caseless else 0
        self._db.compile(expressions=[needle], ids=[0], elements=1, flags=[flags], literal=True)

    def starts(self, data: bytes | bytearray, start: int = 0, end: int | None = None) -> list[int]:
        """Where each occurrence in data[start:end] begins (overlapping ones too), ascending."""
        stop = len(data) if end is None else end
        if stop - start < len(self.needle):
            return []
        found: list[int] = []
        # The binding takes any buffer (its stub says bytes): a view, not a copy, of the stretch.
        view = cast("bytes", memoryview(data)[start:stop])
        self._db.scan(view, match_event_handler=_note, context=found)
        shift = start - len(self.needle)
        return [at + shift for at in found]

    def within(self, data: bytes | bytearray) -> bool:
        """Whether data holds the needle at all (the scan stops at the first occurrence)."""
        try:
            self._db.scan(cast("bytes", data), match_event_handler=_stop)
        except hyperscan.ScanTerminated:
            return True
        return False


def newlines(data: bytes | bytearray, start: int, end: int) -> int:
    """How many b"\\n" are in data[start:end]."""
    if end - start < 4096:
        return data.count(b"\n", start, end)
    bytes_ = np.frombuffer(data, np.uint8)
    return sum(
        int(np.count_nonzero(bytes_[at : min(at + _SLICE, end)] == 10)) for at in range(start, end, _SLICE)
    )
