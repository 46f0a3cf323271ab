"""What the requests in flight may hold in memory.

`max_concurrent_rpcs` counts calls, not bytes: 100 calls of 256 KiB each hold 25 MiB of request
bytes, and each such request is held about three times over (the bytes gRPC hands over, the parsed
message, the strings read out of it). `RequestBytes` admits a call's request only while the bytes of
the requests in flight stay within a budget, so large requests queue at the client's retry instead of
piling up here; small ones (a question is at most 16 KB) are never refused by it while the budget is
not spent on large ones.

The memory a burst of large requests used is freed by Python but kept by glibc's allocator in its
arenas (fragmentation: RSS stays at the burst's peak). Once the server is quiet again after large
requests, `malloc_trim(0)` hands it back to the system, off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from evigate.rules.errors import EvigateError, StatusCode

log = logging.getLogger("evigate.grpc")
RETRY_AFTER_S = 0.2
TRIM_AFTER_BYTES = 8 * 1024 * 1024  # received since the last trim: at most one trim per 8 MiB
QUIET_BYTES = 64 * 1024  # in flight at most this (a few questions, health Watch streams): quiet


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's malloc_trim(0), or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)  # ctypes releases the GIL for the call


@dataclass
class RequestsTooLarge(EvigateError):  # noqa: N818 - named after what the client sent
    """The requests in flight already hold the budget; this one is refused before it is parsed."""

    status_code: ClassVar[StatusCode] = StatusCode.RESOURCE_EXHAUSTED

    size: int
    budget: int

    def status_message(self) -> str:
        return (
            f"the server holds its budget of {self.budget} request bytes in flight; "
            f"this request of {self.size} bytes was not read; try again shortly"
        )

    def error_info(self) -> tuple[str, dict[str, str]]:
        return "REQUEST_BYTES_IN_FLIGHT", {"budget_bytes": str(self.budget)}

    def retry_after_seconds(self) -> float | None:
        return RETRY_AFTER_S


class RequestBytes:
    """The bytes of the requests in flight, bounded by `budget`; trims the heap when quiet again
    after at least `trim_after` bytes were received (0: never trims)."""

    def __init__(
        self, budget: int, trim_after: int = TRIM_AFTER_BYTES, trim: Callable[[], object] | None = None
    ) -> None:
        self.budget = budget
        self.in_flight = 0
        self.trims = 0
        self._trim_after = trim_after
        self._received = 0  # since the last trim
        self._trim = trim if trim is not None else _malloc_trim()
        self._trimming: asyncio.Future[object] | None = None

    def admit(self, size: int) -> None:
        """Counts a request in, or raises RequestsTooLarge. A request alone is always admitted (the
        receive limit bounds it): the budget bounds how many large ones are held together."""
        if self.in_flight and self.in_flight + size > self.budget:
            raise RequestsTooLarge(size, self.budget)
        self.in_flight += size
        self._received += size

    @contextlib.contextmanager
    def hold(self, size: int) -> Iterator[None]:
        """The request counted in for the block's length."""
        self.admit(size)
        try:
            yield
        finally:
            self.release(size)

    def release(self, size: int) -> None:
        self.in_flight -= size
        self._trim_if_quiet()

    def _trim_if_quiet(self) -> None:
        if self.in_flight > QUIET_BYTES or not self._trim_after or self._received < self._trim_after:
            return
        if self._trim is None or (self._trimming is not None and not self._trimming.done()):
            return  # a trim under way looks again when it is done
        self._received = 0
        self.trims += 1
        self._trimming = asyncio.get_running_loop().run_in_executor(None, self._trim)
        self._trimming.add_done_callback(lambda _: self._trim_if_quiet())
