"""A Python regular expression the server's RE2 cannot run, relaxed into one it can.

RE2 has no lookaround and no backreferences; the offline agents write both (`(?<![0-9])502(?![0-9])`
keeps 502 apart from 1502). Lookarounds only narrow where a pattern matches, so dropping them gives
a pattern that matches every line the original does, and more; a backreference becomes "anything".
The server filters with the relaxed pattern, and the original one is applied here to those rows.
"""

from __future__ import annotations

import re

_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!")
_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=\w+\)")


def needs_relaxing(pattern: str) -> bool:
    return any(opening in pattern for opening in _LOOKAROUND) or bool(_BACKREFERENCE.search(pattern))


def relaxed(pattern: str) -> str:
    """The pattern without its lookaround groups and with `.*` for each backreference."""
    out: list[str] = []
    i, depth_skipped = 0, 0
    in_class = False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            piece = pattern[i : i + 2]
            if not depth_skipped:
                out.append(".*" if not in_class and piece[1:].isdigit() and piece[1:] != "0" else piece)
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            if depth_skipped or pattern.startswith(_LOOKAROUND, i):
                depth_skipped += 1
                i += 1
                continue
            if pattern.startswith("(?P=", i):
                end = pattern.index(")", i)
                out.append(".*")
                i = end + 1
                continue
        elif char == ")" and depth_skipped:
            depth_skipped -= 1
            i += 1
            continue
        if not depth_skipped:
            out.append(char)
        i += 1
    return "".join(out)
