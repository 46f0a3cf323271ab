"""Bounded waits on a condition: what tests synchronise on instead of sleeping.

`eventually` polls an async probe until its result satisfies `until`, and fails naming what did not
happen within the bound. The interval only paces the polling; no test relies on it for ordering."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    until: Callable[[T], bool],
    *,
    within: float,
    what: str,
    interval: float = 0.05,
) -> T:
    """The first value of `probe()` that satisfies `until`, polling for at most `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = await probe()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {within} s: {what} (last value: {value!r})")
        await asyncio.sleep(interval)


def until(
    check: Callable[[], bool],
    *,
    within: float,
    what: str,
    interval: float = 0.05,
    detail: Callable[[], str] = lambda: "",
) -> None:
    """Blocks until `check()` holds, polling for at most `within` seconds (threads, fixtures);
    fails naming `what`, followed by `detail()` (a server log's tail, say)."""
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {within} s: {what}\n{detail()}".rstrip())
        time.sleep(interval)


async def holds(check: Callable[[], bool], *, within: float, what: str, interval: float = 0.05) -> None:
    """`until` for a coroutine: the event loop keeps running while the condition is polled."""

    async def probe() -> bool:
        return check()

    await eventually(probe, bool, within=within, what=what, interval=interval)
