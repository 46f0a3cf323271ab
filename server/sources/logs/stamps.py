"""Epoch seconds of the timestamps of many lines, parsed once per minute they name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo

from .events import parse_time

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


class Stamps:
    """Epoch seconds of a time as parse_time() reads it: the same float as
    `parse_time(text).timestamp()`, both whole microseconds divided by 10**6.

    Most writers print milliseconds at a fixed place (`2026-07-08T14:00:01.123+00:00`,
    `2026-07-08 14:00:01,123`): such a text is parsed once per minute it names (the characters
    before the seconds and the zone after the fraction are the key), and the seconds and
    milliseconds are added. Any seconds 00-59 and any three digits are valid and read that way by
    every path of parse_time. Without a zone in the text and with a default zone that may change
    its offset (DST), the key keeps the seconds too."""

    def __init__(self, default_tz: tzinfo) -> None:
        self._tz = default_tz
        self._fixed = isinstance(default_tz, timezone)
        self._minutes: dict[tuple[str, str], int] = {}

    def __call__(self, text: str) -> float | None:
        seconds, millis, zone = text[17:19], text[20:23], text[23:]
        if (
            len(text) < 23
            or text[16] != ":"
            or text[19] not in ".,"
            or not (seconds + millis).isdigit()
            or seconds >= "60"
            or zone[:1].isdigit()
        ):
            moment = parse_time(text, self._tz)
            return None if moment is None else moment.timestamp()
        offset = int(seconds) * 1_000_000 + int(millis) * 1000
        key = (text[:16] if zone or self._fixed else text[:19], zone)
        base = self._minutes.get(key)
        if base is None:
            moment = parse_time(text, self._tz)
            if moment is None:
                return None
            base = self._minutes[key] = (moment - _EPOCH) // _MICRO - offset
        return (base + offset) / 1_000_000
