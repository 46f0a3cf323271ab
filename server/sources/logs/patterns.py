"""Log templates for `summarize_logs`: events grouped by the logging statement that wrote them,
ranked by how often it fired, each citable as one line of evidence.

Grouping is drain3's Drain tree over masked messages (see masking.py), then two corrections that
need no per-system setting:

- a split: where the lines of one Drain cluster differ at a position by only a few literal words,
  each repeated (`Received disconnect ... Bye Bye [preauth]` against `... disconnected by user`,
  `GET` / `POST` / `DELETE`), those words are constants of different statements, not a variable;
  Drain's similarity threshold alone cannot tell a one-word difference from a one-word variable;
- a merge: clusters whose templates are the same once each run of value words counts as one value
  and a leading value as absent are one statement (Drain keeps lines of different lengths apart).

Only distinct masked texts go through Drain and the corrections: once values are masked, real logs
repeat the same texts heavily, which keeps 100,000 events within a few seconds.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from drain3.drain import Drain

from . import severe as severe_events
from .changes import Change, change
from .masking import WILDCARD, mask_tokens
from .slots import Buckets, SlotStats, buckets, slot_stats

_LETTER = re.compile(r"[^\W\d_]")

# Most severe first: the order a reader scans a pattern's levels in.
_SEVERITY = ("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")


class EventLike(Protocol):
    """What summarizing needs of an event (the reader's LogEvent and ParsedLine both have it)."""

    @property
    def timestamp(self) -> datetime | None: ...

    @property
    def level(self) -> str | None: ...

    @property
    def message(self) -> str: ...


@dataclass(frozen=True)
class MinerSettings:
    """Defaults measured on the loghub samples (bench/bench_patterns.py); they are not per system."""

    depth: int = 4  # Drain's prefix tree depth: the first depth-2 words route a line
    similarity: float = 0.5  # share of a cluster's constant words a line must have to join it
    max_children: int = 100
    # A position whose literal words take at most this many distinct values (and fewer values than
    # lines) separates statements; more values make it a variable (user names, hosts).
    max_constant_values: int = 3


@dataclass(frozen=True)
class Pattern:
    template: str
    count: int
    first: datetime | None
    last: datetime | None
    levels: tuple[str, ...]  # most severe first
    example: str  # the message of the first event in the group
    slots: tuple[SlotStats, ...] = ()  # what its varying values were (slots.py)
    buckets: Buckets | None = None  # its events per time bucket
    severe: str | None = None  # why it is a rare severe event (severe.py), listed however rare
    change: Change | None = None  # across the moment compared at (changes.py)
    # why the example failed, as its event says: its exception chain or its record's error field
    cause: str = ""


@dataclass(frozen=True)
class Grouping:
    """Which group each message fell in (indexes into `templates`, numbered in first-seen order)."""

    group_of: list[int]
    templates: list[str]


def group_messages(messages: Sequence[str], settings: MinerSettings | None = None) -> Grouping:
    """The grouping `summarize` uses, exposed so its quality can be measured line by line."""
    settings = settings or MinerSettings()
    drain = Drain(depth=settings.depth, sim_th=settings.similarity, max_children=settings.max_children)
    # Work on distinct masked texts: real logs repeat them heavily once numbers and ids are masked.
    text_of: list[str] = []
    rows: dict[str, list[str]] = {}
    weight: Counter[str] = Counter()
    cluster_texts: dict[int, list[str]] = defaultdict(list)
    for message in messages:
        words = mask_tokens(message)
        text = " ".join(words)
        text_of.append(text)
        weight[text] += 1
        if text not in rows:
            rows[text] = words
            # A repeated text would join the cluster it joined before (its template already covers
            # it) and change nothing but Drain's counter, so only new texts go through the tree.
            cluster_texts[drain.add_log_message(text)[0].cluster_id].append(text)
    parts = [
        part
        for texts in cluster_texts.values()
        for part in _split(texts, rows, weight, settings.max_constant_values)
    ]
    return _merge(parts, rows, weight, text_of)


def _merge(
    parts: list[list[str]], rows: dict[str, list[str]], weight: Counter[str], text_of: list[str]
) -> Grouping:
    """Number the parts, one number per merge key; a merged group shows its largest part's template."""
    group_of_text: dict[str, int] = {}
    number_of_key: dict[str, int] = {}
    best: list[tuple[int, str]] = []  # (lines, template) of each group's largest part
    for part in parts:
        template = _template([rows[t] for t in part])
        number = number_of_key.setdefault(_merge_key(template), len(best))
        lines = sum(weight[t] for t in part)
        if number == len(best):
            best.append((lines, template))
        elif lines > best[number][0]:
            best[number] = (lines, template)
        for text in part:
            group_of_text[text] = number
    return Grouping([group_of_text[t] for t in text_of], [template for _, template in best])


def _merge_key(template: str) -> str:
    """The template with each run of value words as one: Drain keeps lines of different lengths
    apart, so a value spelled in one word here and two there (`lifetime 00:01` / `lifetime <1 sec`,
    `18846 bytes` / `18846 bytes (18.4 KB)`) splits a statement. A template of values only keeps
    its own key: it names no statement to merge on."""
    words: list[str] = []
    for word in template.split():
        is_value = WILDCARD in word and not _LETTER.search(word.replace(WILDCARD, ""))
        if is_value and words and words[-1] == WILDCARD:
            continue
        words.append(WILDCARD if is_value else word)
    while words and words[0] == WILDCARD:
        words.pop(0)
    return " ".join(words) if any(WILDCARD not in w for w in words) else template


def _split(
    texts: list[str], rows: dict[str, list[str]], weight: Counter[str], max_values: int
) -> list[list[str]]:
    lines = sum(weight[t] for t in texts)
    if len(texts) < 2 or max_values < 2:
        return [texts]
    width = min(len(rows[t]) for t in texts)
    keys: list[int] = []
    for position in range(width):
        values = {rows[t][position] for t in texts}
        if len(values) < 2 or any(WILDCARD in v for v in values):
            continue  # constant here, or a masked variable whose spellings say nothing
        if len(values) <= max_values and len(values) < lines:
            keys.append(position)
    if not keys:
        return [texts]
    parts: dict[tuple[str, ...], list[str]] = {}
    for text in texts:
        parts.setdefault(tuple(rows[text][p] for p in keys), []).append(text)
    return list(parts.values())


def _template(rows: list[list[str]]) -> str:
    # The rows come from one Drain cluster, so they have one length (Drain's tree is keyed by it).
    return " ".join(column[0] if len(set(column)) == 1 else WILDCARD for column in zip(*rows, strict=True))


MAX_SEVERE = 10  # rare severe templates listed beyond the most frequent ones


@dataclass(frozen=True)
class Summary:
    patterns: list[Pattern]  # the most frequent, then rare severe ones beyond them
    total: int  # distinct templates in all


def summarize(
    events: Iterable[EventLike],
    settings: MinerSettings | None = None,
    limit: int | None = None,
    span: tuple[datetime | None, datetime | None] = (None, None),
) -> list[Pattern]:
    """The events' templates, most frequent first (ties: earliest first, then template text)."""
    return summary(events, settings, limit, span).patterns


def summary(
    events: Iterable[EventLike],
    settings: MinerSettings | None = None,
    limit: int | None = None,
    span: tuple[datetime | None, datetime | None] = (None, None),
    at: datetime | None = None,
) -> Summary:
    """The `limit` most frequent templates, each with its value statistics and counts per bucket of
    `span` (the query's window; None: the events' own times), then up to MAX_SEVERE rare severe
    templates that did not make the cut. With `at`, each template says how it changed across that
    moment, and the changed ones come first (new, rose, gone, fell; the largest change first)."""
    listed = list(events)
    grouping = group_messages([e.message for e in listed], settings)
    members: dict[int, list[EventLike]] = defaultdict(list)
    for event, group in zip(listed, grouping.group_of, strict=True):
        members[group].append(event)
    never = datetime.max.replace(tzinfo=UTC)
    plain = [_pattern(template, members[group]) for group, template in enumerate(grouping.templates)]
    if at is not None:
        plain = _with_changes(plain, members, at, span)
    order = sorted(
        range(len(plain)),
        key=lambda g: (*_change_key(plain[g]), -plain[g].count, plain[g].first or never, plain[g].template),
    )
    top = order if limit is None else order[:limit]
    rest = [g for g in order[len(top) :] if plain[g].severe]
    rest.sort(key=lambda g: (plain[g].count, plain[g].first or never))
    chosen = [*top, *rest[:MAX_SEVERE]]
    described = [_described(plain[g], members[g], span) for g in chosen]
    return Summary(described, len(plain))


def _with_changes(
    plain: list[Pattern],
    members: dict[int, list[EventLike]],
    at: datetime,
    span: tuple[datetime | None, datetime | None],
) -> list[Pattern]:
    moments = [[e.timestamp for e in members[g] if e.timestamp is not None] for g in range(len(plain))]
    every = [m for group in moments for m in group]
    if not every:
        return plain
    start, end = span[0] or min(every), span[1] or max(every)
    return [replace(p, change=change(m, at, start, end)) for p, m in zip(plain, moments, strict=True)]


def _change_key(pattern: Pattern) -> tuple[int, float]:
    return pattern.change.sort_key() if pattern.change is not None else (0, 0.0)


def _pattern(template: str, events: list[EventLike]) -> Pattern:
    moments = [e.timestamp for e in events if e.timestamp is not None]
    levels = _ordered({e.level for e in events if e.level})
    example = events[0].message
    return Pattern(
        template=template,
        count=len(events),
        first=min(moments) if moments else None,
        last=max(moments) if moments else None,
        levels=levels,
        example=example,
        severe=severe_events.kind(example, levels[0] if levels else None),
    )


def _described(
    pattern: Pattern, events: list[EventLike], span: tuple[datetime | None, datetime | None]
) -> Pattern:
    timed = [(e.timestamp, e.message) for e in events if e.timestamp is not None]
    return replace(
        pattern,
        slots=slot_stats(pattern.template, timed),
        buckets=buckets([moment for moment, _ in timed], *span) if timed else None,
    )


def _ordered(levels: set[str]) -> tuple[str, ...]:
    known = [lv for lv in _SEVERITY if lv in levels]
    return (*known, *sorted(levels - set(_SEVERITY)))


def pattern_time(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if moment else "-"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def pattern_ref_text(pattern: Pattern) -> str:
    """The pattern's evidence text, every field on one line (times in UTC):
    template="Connection is not available, request timed out after <*>ms" count=412
    first=2026-01-02 09:58:01 last=2026-01-02 10:31:12 levels=ERROR,WARN example="...\""""
    return (
        f'template="{_one_line(pattern.template)}" count={pattern.count} '
        f"first={pattern_time(pattern.first)} last={pattern_time(pattern.last)} "
        f"levels={','.join(pattern.levels) or '-'} "
        f'example="{_one_line(pattern.example)}"'
    ) + details_text(
        pattern.severe,
        [s.text() for s in pattern.slots],
        bucket_text(pattern.buckets),
        pattern.change.text() if pattern.change else "",
        pattern.cause,
    )


def bucket_text(counts: Buckets | None) -> str:
    """The counts per bucket, when the events fell in more than one."""
    return counts.text() if counts is not None and len(counts.counts) > 1 else ""


def details_text(
    severe: str | None, slots: list[str], counts: str, changed: str = "", cause: str = ""
) -> str:
    """What follows a pattern's core text: ` severe=... | cause="..." | change=... | slot1: ... |
    per 5m: ...` (empty parts left out)."""
    said = f'cause="{_one_line(cause)}"' if cause else ""
    parts = [part for part in (said, changed, *slots, counts) if part]
    head = f" severe={severe.replace(' ', '_')}" if severe else ""
    return head + "".join(f" | {part}" for part in parts)
