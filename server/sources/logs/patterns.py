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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from drain3.drain import Drain

from .masking import WILDCARD, mask_tokens

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


@dataclass(frozen=True)
class Grouping:
    """Which group each message fell in (indexes into `templates`, numbered in first-seen order)."""

    group_of: list[int]
    templates: list[str]


def group_messages(
    messages: Sequence[str], settings: MinerSettings | None = None, weights: Sequence[int] | None = None
) -> Grouping:
    """The grouping `summarize` uses, exposed so its quality can be measured line by line.
    `weights`: how many lines each message stands for (a log store that counted repeats), 1 each
    when None."""
    settings = settings or MinerSettings()
    drain = Drain(depth=settings.depth, sim_th=settings.similarity, max_children=settings.max_children)
    # Work on distinct masked texts: real logs repeat them heavily once numbers and ids are masked.
    text_of: list[str] = []
    rows: dict[str, list[str]] = {}
    weight: Counter[str] = Counter()
    cluster_texts: dict[int, list[str]] = defaultdict(list)
    for number, message in enumerate(messages):
        words = mask_tokens(message)
        text = " ".join(words)
        text_of.append(text)
        weight[text] += 1 if weights is None else weights[number]
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


def summarize(
    events: Iterable[EventLike], settings: MinerSettings | None = None, limit: int | None = None
) -> list[Pattern]:
    """The events' templates, most frequent first (ties: earliest first, then template text)."""
    listed = list(events)
    grouping = group_messages([e.message for e in listed], settings)
    count: Counter[int] = Counter(grouping.group_of)
    first: dict[int, datetime] = {}
    last: dict[int, datetime] = {}
    levels: dict[int, set[str]] = defaultdict(set)
    example: dict[int, str] = {}
    for event, group in zip(listed, grouping.group_of, strict=True):
        example.setdefault(group, event.message)
        if event.level:
            levels[group].add(event.level)
        moment = event.timestamp
        if moment is not None:
            if group not in first or moment < first[group]:
                first[group] = moment
            if group not in last or moment > last[group]:
                last[group] = moment
    patterns = [
        Pattern(
            template=template,
            count=count[group],
            first=first.get(group),
            last=last.get(group),
            levels=ordered_levels(levels[group]),
            example=example[group],
        )
        for group, template in enumerate(grouping.templates)
    ]
    never = datetime.max.replace(tzinfo=UTC)
    patterns.sort(key=lambda p: (-p.count, p.first or never, p.template))
    return patterns if limit is None else patterns[:limit]


def ordered_levels(levels: set[str]) -> tuple[str, ...]:
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
    )
