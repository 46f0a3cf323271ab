"""A shutdown bounded in time whatever the database or a peer does.

The calls in flight get the grace period; the background tasks (workers, the log index build, the
catalog refresh, the health checks) and the database then share `shutdown_timeout_s`. Each step
runs within what is left of that budget; a step past it is cancelled and left behind, so the steps
after it still run. In the `evigate serve` process a watchdog (SIGALRM) ends the process at the
bound (`grace_period_s + shutdown_timeout_s` after the signal) if anything still holds it: the
event loop's teardown waits for every task and executor thread, and the interpreter's own
finalization can hang in a native library with sockets to a database that never answers.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable
from typing import Any

from evigate.server.tasks import within

log = logging.getLogger("evigate.shutdown")

# The share of shutdown_timeout_s the steps may use; the rest is the interpreter's to exit in.
STEPS_SHARE = 0.8


class Budget:
    """The time left until a shutdown must be over."""

    def __init__(self, seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._end = self._loop.time() + seconds

    def left(self) -> float:
        return max(self._end - self._loop.time(), 0.0)

    async def run(self, what: str, step: Awaitable[Any] | None) -> None:
        """Runs one step within the time left (nothing when there is no such step)."""
        if step is not None:
            await within(what, self.left(), step)


def start_watchdog(seconds: float) -> None:
    """Ends the process `seconds` from now unless it has exited by then: SIGALRM, left at its
    default action, which the kernel carries out whatever the interpreter does (a thread could not:
    once the interpreter finalizes, no thread but the main one runs, and a native library's
    teardown can hold that one)."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
