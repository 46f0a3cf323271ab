"""Stopping background tasks, each within a bounded time whatever it waits on (a database that no
longer answers, a peer that never closes its socket)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import Any

log = logging.getLogger("evigate.tasks")

# How long a cancelled task may take to unwind before its stopper moves on without it.
UNWIND_TIMEOUT_S = 5.0


async def cancel_and_wait(task: asyncio.Task[Any] | None, timeout_s: float | None = UNWIND_TIMEOUT_S) -> None:
    """Cancels `task` (if it is still running) and waits until it has finished unwinding, at most
    `timeout_s` (None: however long it takes): a task stuck in a step that ignores cancellation is
    left to end with the loop."""
    if task is None or task.done():
        return
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=timeout_s)
    if not done:
        log.warning("task did not stop in time", extra={"task": task.get_name(), "timeout_s": timeout_s})
        return
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.result()


async def within(what: str, timeout_s: float, step: Awaitable[Any]) -> bool:
    """Runs one shutdown step for at most `timeout_s`; past it the step is cancelled and not waited
    for. True when the step finished in time (an error in it is logged, never raised: the steps
    after it still run)."""
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=max(timeout_s, 0.0))
    if not done:
        task.cancel()
        log.warning("shutdown step did not finish in time", extra={"step": what, "timeout_s": timeout_s})
        return False
    if not task.cancelled() and task.exception() is not None:
        log.warning("shutdown step failed", extra={"step": what, "error": repr(task.exception())})
    return True
