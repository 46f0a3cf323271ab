"""A header layout inferred from a sample, for files that no named format reads.

Most log lines open with fields a program writes the same way every time (timestamps, counters,
hosts, ids, levels, component names) before the free-text message. Column by column over the
sample's whitespace-separated words, a column belongs to the header while nearly every line holds
a header-looking word there; the message starts at the first column that reads like text. Within
the header, the first run of columns that parses as a timestamp becomes the line's time, and a
column of level words its level.

This is a fallback: a named format (textformats.py) is more exact, and detection tries those first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .textformats import LEVEL_REGEX, TextFormat, detect_text_format, is_continuation
from .timestamps import KINDS, Clock

# A word a header writes: holds a digit (time, counter, id, host, address), a dash placeholder,
# a short upper-case code (RAS, KERNEL, CBS), a month or weekday name, a dotted or bracketed
# component name (unix.hw, chrome.exe, [main]), a tag closing on a colon (kernel:), a level.
_HEADER_WORD = re.compile(
    r".*\d|-$|[A-Z][A-Z_]{0,11}$|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Mon|Tue|Wed|Thu|Fri|Sat|Sun)$"
    r"|[\w-]+(?:\.[\w-]+)+$|\[\S*\]$|\S+:$|" + LEVEL_REGEX + "$"
)
_FEW_VALUES = 16
_LEVEL_WORD = re.compile(r"[\[(]?" + LEVEL_REGEX + r"[\])]?:?$")
_KIND_REGEXES = {name: re.compile(kind.regex + "$") for name, kind in KINDS.items() if name != "time_only"}


def _column(rows: list[list[str]], index: int, share: float) -> list[str] | None:
    # Only lines with a message word after this column can tell a header word from a message.
    words = [row[index] for row in rows if len(row) > index + 1]
    return words if len(words) >= share * len(rows) else None


def _header_columns(rows: list[list[str]], share: float, max_columns: int) -> int:
    columns = 0
    while columns < max_columns:
        words = _column(rows, columns, share)
        if words is not None and sum(1 for w in words if _HEADER_WORD.match(w)) >= share * len(words):
            columns += 1
        elif not (skip := _enumerated_fields(rows, columns, share, max_columns)):
            break
        else:
            columns += skip
    return columns


def _enumerated_fields(rows: list[list[str]], start: int, share: float, max_columns: int) -> int:
    """Plain words can still be header fields (a component, a state: `unix.hw action start`): up to
    two columns of a few distinct words each, followed by a column of numbers, are header; a
    message's first words are too varied, or not followed by a number on nearly every line."""
    for gap in (1, 2):
        if start + gap >= max_columns:
            return 0
        words = _column(rows, start + gap - 1, share)
        if words is None or len(set(words)) > _FEW_VALUES:
            return 0
        after = _column(rows, start + gap, share)
        if after is not None and sum(1 for w in after if w[:1].isdigit()) >= share * len(after):
            return gap
    return 0


def _timestamp_span(rows: list[list[str]], columns: int, share: float) -> tuple[int, int, str] | None:
    for start in range(columns):
        for width in (3, 2, 1):
            if start + width > columns:
                continue
            for name, regex in _KIND_REGEXES.items():
                hits = sum(
                    1 for row in rows if regex.match(" ".join(row[start : start + width]).rstrip(",;"))
                )
                if hits >= share * len(rows):
                    return start, width, name
    return None


def infer_header_format(
    sample_lines: Sequence[str], *, share: float = 0.9, max_columns: int = 12, clock: Clock | None = None
) -> TextFormat | None:
    """A format cutting the inferred header off each line; None when the lines open with text."""
    rows = [line.split() for line in sample_lines if line.strip() and not is_continuation(line)]
    if not rows:
        return None
    columns = _header_columns(rows, share, max_columns)
    if columns == 0:
        return None
    stamp = _timestamp_span(rows, columns, share)
    parts: list[str] = []
    position = 0
    while position < columns:
        if stamp is not None and position == stamp[0]:
            parts.append(r"(?P<timestamp>\S+" + r"\s+\S+" * (stamp[1] - 1) + r"?)[,;]?")
            position += stamp[1]
            continue
        column = [row[position] for row in rows if len(row) > position]
        is_level = sum(1 for w in column if _LEVEL_WORD.match(w)) >= share * len(column)
        parts.append(
            r"[\[(]?(?P<level>\w+)[\])]?:?" if is_level and "(?P<level>" not in "".join(parts) else r"\S+"
        )
        position += 1
    regex = r"\s*" + r"\s+".join(parts) + r"\s+(?P<message>.*)"
    return TextFormat(
        f"inferred({columns} header fields)",
        regex,
        KINDS[stamp[2]].parse if stamp else None,
        description="header columns inferred from a sample of the file",
        clock=clock,
    )


def text_format_for(sample_lines: Sequence[str]) -> TextFormat | None:
    """A named format if one reads the sample unambiguously, else an inferred header, else None."""
    return detect_text_format(sample_lines) or infer_header_format(sample_lines)
