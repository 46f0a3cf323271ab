"""Epoch seconds of the timestamps of many lines, parsed once per minute (or day) they name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo

import numpy as np

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
    its offset (DST), the key keeps the seconds too. `many()` goes further for texts of one
    width: with a fixed offset (a numeric zone in the text, or a fixed default zone) a day's times
    are its midnight plus the hours, minutes, seconds and milliseconds, so one parse per day."""

    def __init__(self, default_tz: tzinfo) -> None:
        self._tz = default_tz
        self._fixed = isinstance(default_tz, timezone)
        self._minutes: dict[tuple[str, str], int] = {}
        self._days: dict[tuple[str, str], int] = {}

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

    def many(self, texts: list[str]) -> list[float | None]:
        """What calling the Stamps on each text gives; texts of one width in the commonest shape
        are computed together (numpy), with one lookup per run of lines naming the same minute."""
        n = len(texts)
        width = len(texts[0]) if texts else 0
        joined = "".join(texts)
        if n < 16 or width < 23 or len(joined) != n * width or not joined.isascii():
            return list(map(self, texts))
        if width == 23 and not self._fixed:  # no zone, a default zone with DST: keyed by the second
            return list(map(self, texts))
        chars = np.frombuffer(joined.encode("ascii"), np.uint8).reshape(n, width)
        # hour, minute, second, millisecond digits; below "0" wraps around to large values
        digits = chars[:, [11, 12, 14, 15, 17, 18, 20, 21, 22]] - 48
        good = (chars[:, 13] == 58) & (chars[:, 16] == 58) & ((chars[:, 19] == 46) | (chars[:, 19] == 44))
        good &= (digits <= 9).all(axis=1)
        d = digits.astype(np.int64)
        minutes = (d[:, 0] * 10 + d[:, 1]) * 60 + d[:, 2] * 10 + d[:, 3]
        good &= (d[:, 0] * 10 + d[:, 1] <= 23) & (d[:, 2] <= 5) & (d[:, 4] <= 5)
        if width > 23:
            good &= (chars[:, 23] < 48) | (chars[:, 23] > 57)  # a zone, not more digits
        # A fixed zone (in the text, or the default) makes a day's times its midnight plus the
        # microseconds since: one key per day, so one parse per day a file names.
        micros = minutes * 60_000_000 + (d[:, 4] * 10 + d[:, 5]) * 1_000_000
        micros += (d[:, 6] * 100 + d[:, 7] * 10 + d[:, 8]) * 1000
        rows = np.flatnonzero(good)
        keys = np.concatenate((chars[rows, :11], chars[rows, 23:]), axis=1)
        runs = np.flatnonzero((keys[1:] != keys[:-1]).any(axis=1)) + 1 if len(rows) else rows
        bases = np.empty(len(rows), np.int64)
        broken: list[int] = []
        for first, end in zip((0, *runs.tolist()), (*runs.tolist(), len(rows)), strict=True):
            if first == end:
                continue
            text = texts[int(rows[first])]
            base = self._base(text, int(micros[rows[first]]))
            if base is None:  # read one by one, as the Stamps would
                broken.extend(rows[first:end].tolist())
                base = 0
            bases[first:end] = base
        values = ((bases + micros[rows]) / 1_000_000).tolist()
        out: list[float | None]
        if len(rows) == n:  # the common chunk: every text in the shape
            out = values
        else:
            out = [None] * n
            for row, value in zip(rows.tolist(), values, strict=True):
                out[row] = value
        for row in (*np.flatnonzero(~good).tolist(), *broken):
            out[row] = self(texts[row])
        return out

    def _base(self, text: str, offset: int) -> int | None:
        """The microseconds of the midnight before a text's time (its day key's base), parsed once
        per key."""
        key = (text[:11], text[23:])
        base = self._days.get(key)
        if base is None:
            moment = parse_time(text, self._tz)
            if moment is None:
                return None
            base = self._days[key] = (moment - _EPOCH) // _MICRO - offset
        return base
