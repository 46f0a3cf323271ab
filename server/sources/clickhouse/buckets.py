"""A summary's counts computed by the server over the whole window, not over the mined remainder.

One GROUP BY per summary (sql.select_buckets) counts the window's rows per time bucket and, for each
template the miner found, the rows its regex matches per bucket and the first one's second:

- `per_bucket`, the window's rows per bucket, always (the width the file source would choose for the
  window, else for the rows' own first and last second);
- a template's count, first time and buckets, when the miner saw only the newest rows of a larger
  window and a regex of the template selects exactly its rows among the mined ones (`<*>` as any
  run, else as one token; `calibrated`): the server counts that regex over the window. A template
  no regex fits (the masking reshaped its messages) keeps its mined count; the facts say how many
  templates the server counted. A bucket width the server's finer buckets cannot be summed into
  keeps the mined buckets.

With every row of the window mined, the mined counts are already exact: only `per_bucket` is asked.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from evigate.server.queries.types import JSON, TimeWindow
from evigate.server.sources.logs.masking import WILDCARD
from evigate.server.sources.logs.patterns import Pattern
from evigate.server.sources.logs.slots import Buckets, bucket_width, counted

from .client import Row

FINEST = 60  # the finest bucket a template's buckets are summed from (every named width is a multiple)
MAX_FINE = 20_160  # fine buckets at most (two weeks of minutes); a wider window counts at its own width


def template_regexes(template: str) -> tuple[str, str]:
    """RE2 regexes of a template's messages, its words literal and any whitespace between them:
    with `<*>` as any run (a masked run of values) and as one token."""
    words = [re.escape(piece).replace(r"\ ", " ") for piece in template.split(WILDCARD)]

    def regex(slot: str) -> str:
        return r"^\s*" + re.sub(r" +", r"\\s+", slot.join(words)) + r"\s*$"

    return regex(".+?"), regex(r"\S+?")


def calibrated(patterns: Sequence[Pattern], messages: Sequence[str]) -> list[str | None]:
    """Per template, a regex that selects exactly its mined rows among all the mined rows (so its
    count over the window is the template's), or None: none does, the mined count stays."""
    out: list[str | None] = []
    for pattern in patterns:
        chosen = None
        for regex in template_regexes(pattern.template):
            compiled = re.compile(regex)
            if sum(1 for message in messages if compiled.search(message)) == pattern.count:
                chosen = regex
                break
        out.append(chosen)
    return out


def widths(window: TimeWindow, first: int, last: int) -> tuple[int, int]:
    """(the window's bucket width, the width the server counts at)."""
    start = window.since or datetime.fromtimestamp(first, UTC)
    end = window.until or datetime.fromtimestamp(last, UTC)
    width = bucket_width(start, end)
    span = max((end - start).total_seconds(), 1.0)
    return width, FINEST if span / FINEST <= MAX_FINE else width


def apply(
    rows: Sequence[Row],
    patterns: Sequence[Pattern],
    window: TimeWindow,
    width: int,
    fine: int,
    *,
    asked: Mapping[int, int],
) -> tuple[list[Pattern], JSON]:
    """The patterns with the server's counts where they replace the mined ones (`asked`: pattern
    number → the number of its regex in the query), and the facts: the window's rows per bucket and
    how many templates the server counted."""
    overall: dict[int, int] = defaultdict(int)
    for row in rows:
        overall[int(row["bucket"]) // width * width] += int(row["total"])
    facts: JSON = {"per_bucket": counted(width, overall).text()}
    if not asked:
        return list(patterns), {**facts, "template_counts": {"mined_here": len(patterns), "by_server": 0}}
    out, by_server = [], 0
    for n, pattern in enumerate(patterns):
        key = asked.get(n)
        hits = [
            (int(r["bucket"]), int(r[f"t{key}"]), int(r[f"f{key}"]))
            for r in rows
            if key is not None and int(r[f"t{key}"])
        ]
        count = sum(hit for _, hit, _ in hits)
        if not hits or count < pattern.count:
            out.append(pattern)
            continue
        first = datetime.fromtimestamp(min(at for _, _, at in hits), UTC)
        last = pattern.last or first  # the newest rows were mined: their last is the template's
        own = bucket_width(window.since or first, window.until or last)
        buckets = _summed(hits, own) if own % fine == 0 else pattern.buckets
        out.append(replace(pattern, count=count, first=first, buckets=buckets))
        by_server += 1
    return out, {
        **facts,
        "template_counts": {"mined_here": len(patterns) - by_server, "by_server": by_server},
    }


def _summed(hits: Sequence[tuple[int, int, int]], width: int) -> Buckets:
    counts: dict[int, int] = defaultdict(int)
    for bucket, hit, _ in hits:
        counts[bucket // width * width] += hit
    return counted(width, counts)
