"""Bounded waits on a condition: what tests synchronise on instead of sleeping.

`eventually` polls an async probe until its result satisfies `until`, and fails naming what did not
happen within the bound. The interval only paces the polling; no test relies on it for ordering.

A bound is a limit that only a failing test reaches, never a speed the test asserts: each is
stretched by `SLACK` so that a machine whose cores are all busy (a CPU burner, parallel builds)
still meets it. Speed is measured by the benches in `bench/`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

# Seen needed: a server's start-up took over 60 s at a load average of 16 on two cores.
SLACK = 4.0


async def eventually(
    probe: Callable[[], Awaitable[T]],
    until: Callable[[T], bool],
    *,
    within: float,
    what: str,
    interval: float = 0.05,
) -> T:
    """The first value of `probe()` that satisfies `until`, polling for at most `within` seconds
    (times `SLACK`)."""
    deadline = time.monotonic() + within * SLACK
    while True:
        value = await probe()
        if until(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {within * SLACK:g} s: {what} (last value: {value!r})")
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
    fails naming `what`, followed by `detail()` (a server log's tail, say). The bound is stretched
    by `SLACK` like `eventually`'s."""
    deadline = time.monotonic() + within * SLACK
    while not check():
        if time.monotonic() >= deadline:
            raise AssertionError(f"not within {within * SLACK:g} s: {what}\n{detail()}".rstrip())
        time.sleep(interval)


async def holds(check: Callable[[], bool], *, within: float, what: str, interval: float = 0.05) -> None:
    """`until` for a coroutine: the event loop keeps running while the condition is polled."""

    async def probe() -> bool:
        return check()

    await eventually(probe, bool, within=within, what=what, interval=interval)
