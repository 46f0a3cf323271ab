"""Remembers that the database is unreachable, so that calls fail fast instead of each waiting out
its own timeout on a partitioned network (packets dropped, nothing refused).

While open (tripped), every unit of work fails at once with DatabaseUnavailable carrying the time
until the next try. After that delay one call goes through as a probe (the others keep failing fast
while it runs): success closes the breaker, failure opens it again with the delay doubled up to a
cap. The health check's ping closes it too as soon as the database answers.
"""

from __future__ import annotations

import logging
import time

from evigate.storage.errors import DatabaseRefused

log = logging.getLogger("evigate.storage")


class Breaker:
    def __init__(self, first_delay_s: float = 1.0, max_delay_s: float = 10.0) -> None:
        self._first_delay = first_delay_s
        self._max_delay = max_delay_s
        self._delay = first_delay_s
        self._retry_at: float | None = None  # None: closed (the database answers)
        self._probing = False
        self._reason = ""

    @property
    def open(self) -> bool:
        return self._retry_at is not None

    @property
    def delay(self) -> float:
        """Seconds until the next try (what DatabaseUnavailable tells the client)."""
        return self._delay

    def admit(self) -> bool:
        """Raises DatabaseRefused while open; returns True when this call is the probe."""
        retry_at = self._retry_at
        if retry_at is None:
            return False
        now = time.monotonic()
        if now < retry_at or self._probing:
            wait = max(retry_at - now, 0.0) if not self._probing else self._delay
            raise DatabaseRefused(f"database unreachable ({self._reason}); retry in {wait:.1f} s", wait)
        self._probing = True
        return True

    def trip(self, reason: str, *, probe: bool = False) -> None:
        if self._retry_at is not None and not probe:
            return  # already open: a call admitted before the trip failed too
        if probe:
            self._delay = min(self._delay * 2, self._max_delay)
        elif self._retry_at is None:
            log.warning("database unreachable: failing fast", extra={"error": reason})
        self._probing = False
        self._reason = reason
        self._retry_at = time.monotonic() + self._delay

    def close(self) -> None:
        if self._retry_at is not None:
            log.info("database answers again")
        self._retry_at = None
        self._probing = False
        self._delay = self._first_delay

    def end_probe(self) -> None:
        """The probe ended without telling whether the database answers (e.g. cancelled)."""
        self._probing = False
