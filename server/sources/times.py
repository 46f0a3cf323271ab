"""How evidence shows a moment: in UTC, as the seed's evidence texts do."""

from __future__ import annotations

from datetime import UTC, datetime


def display_time(moment: datetime) -> str:
    """UTC, as the seed's evidence texts show it: 2026-07-08 23:05:28 (milliseconds when present)."""
    text = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{text}.{moment.microsecond // 1000:03d}" if moment.microsecond else text
