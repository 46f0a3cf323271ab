"""What a template's masked values were: per variable slot the first and last value (with their
times), the smallest and largest, how many distinct and the commonest; and how many events fell in
each time bucket. A pattern summary that hides its numbers cannot answer "the latency climbed from
120 ms at 09:58 to 2.3 s at 10:31": these statistics keep them citable.

A slot's values are read back from each message by a regex built from the template (its constant
words literal, each `<*>` a lazy group, any run of spaces as one); a message the masking reshaped
(collapsed value runs, time phrases) does not fit it and is left out of the statistics, never
guessed at.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from .masking import WILDCARD

TOP_VALUES = 3
MAX_SLOTS = 4  # a template's first slots with values that differ: the ones a reader quotes
MAX_BUCKETS = 12
# Bucket widths a reader names: a span is cut in the smallest that gives at most MAX_BUCKETS.
_WIDTHS = (60, 300, 900, 3600, 3 * 3600, 6 * 3600, 86400, 7 * 86400)
_NUMBER = re.compile(r"^[^\d+-]{0,3}([+-]?\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class SlotStats:
    position: int  # 1-based place of the `<*>` in the template
    first: str
    first_at: datetime
    last: str
    last_at: datetime
    low: str  # smallest by number when every value starts with one, else by text
    high: str
    distinct: int
    top: tuple[tuple[str, int], ...]  # commonest values with their counts

    def text(self) -> str:
        top = ",".join(f"{value}×{count}" for value, count in self.top)
        return (
            f"slot{self.position}: first={self.first}@{clock(self.first_at)} "
            f"last={self.last}@{clock(self.last_at)} min={self.low} max={self.high} "
            f"distinct={self.distinct} top={top}"
        )


@dataclass(frozen=True)
class Buckets:
    width_s: int
    counts: tuple[tuple[datetime, int], ...]  # each non-empty bucket's start and count, in time order

    def text(self) -> str:
        """`per 5m: 2026-07-08 22:00=5 22:05=7 ...`: a bucket on the day before it shows its clock only."""
        out, day = [], None
        for start, count in self.counts:
            moment = start.astimezone(UTC)
            shown = moment.strftime("%H:%M") if moment.date() == day else moment.strftime("%Y-%m-%d %H:%M")
            day = moment.date()
            out.append(f"{shown}={count}")
        return f"per {_width_name(self.width_s)}: " + " ".join(out)


def template_regex(template: str) -> re.Pattern[str]:
    pieces = [re.escape(" ".join(part.split())).replace(r"\ ", r"\s+") for part in template.split(WILDCARD)]
    body = "(.+?)".join(pieces)
    if template.endswith(WILDCARD):
        body = body[: -len("(.+?)")] + "(.+)"
    return re.compile(rf"\s*{body}\s*")


def _value(text: str) -> str:
    return text.strip(" ,;:()[]{}'\"")


def slot_stats(template: str, events: Sequence[tuple[datetime, str]]) -> tuple[SlotStats, ...]:
    """The statistics of each slot that varies, from the events (time, message) of one template."""
    if WILDCARD not in template:
        return ()
    regex = template_regex(template)
    rows: list[tuple[datetime, tuple[str, ...]]] = []
    for moment, message in events:
        found = regex.fullmatch(" ".join(message.split()))
        if found is not None:
            rows.append((moment, tuple(_value(v) for v in found.groups())))
    if not rows:
        return ()
    rows.sort(key=lambda row: row[0])
    out: list[SlotStats] = []
    for slot in range(len(rows[0][1])):
        values = [(moment, values[slot]) for moment, values in rows]
        counts = Counter(v for _, v in values)
        if len(counts) < 2:
            continue
        low, high = _extremes(list(counts))
        out.append(
            SlotStats(
                position=slot + 1,
                first=values[0][1],
                first_at=values[0][0],
                last=values[-1][1],
                last_at=values[-1][0],
                low=low,
                high=high,
                distinct=len(counts),
                top=tuple(counts.most_common(TOP_VALUES)),
            )
        )
        if len(out) == MAX_SLOTS:
            break
    return tuple(out)


def _extremes(values: list[str]) -> tuple[str, str]:
    numbers = [(_NUMBER.match(v), v) for v in values]
    if all(match is not None for match, _ in numbers):
        ordered = sorted(numbers, key=lambda pair: float(pair[0].group(1)) if pair[0] else 0.0)
        return ordered[0][1], ordered[-1][1]
    return min(values), max(values)


def buckets(
    moments: Sequence[datetime], since: datetime | None = None, until: datetime | None = None
) -> Buckets:
    """The events' counts per bucket of the smallest named width that cuts the span (the window,
    else the events' own) in at most MAX_BUCKETS."""
    if not moments:
        return Buckets(_WIDTHS[0], ())
    width = bucket_width(since or min(moments), until or max(moments))
    counts = Counter(int(m.timestamp()) // width * width for m in moments)
    return counted(width, counts)


def bucket_width(start: datetime, end: datetime) -> int:
    """The smallest named width (seconds) that cuts [start, end] in at most MAX_BUCKETS; a bucket
    starts at a multiple of it since the epoch (as a store that counts by `intDiv(t, width)` does)."""
    span = max((end - start).total_seconds(), 1.0)
    return next((w for w in _WIDTHS if span / w <= MAX_BUCKETS), _WIDTHS[-1])


def counted(width: int, counts: dict[int, int]) -> Buckets:
    """Buckets from counts by bucket start (epoch seconds); empty buckets left out."""
    return Buckets(
        width,
        tuple((datetime.fromtimestamp(at, UTC), counts[at]) for at in sorted(counts) if counts[at]),
    )


def clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _width_name(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400}d"
    if seconds % 3600 == 0:
        return f"{seconds // 3600}h"
    return f"{seconds // 60}m"
