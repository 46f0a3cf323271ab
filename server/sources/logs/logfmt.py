"""logfmt (`time=... level=info msg="text with spaces" key=value`), as Go services write it."""

from __future__ import annotations

import re
from datetime import tzinfo

from .config import FieldNames
from .events import ParsedLine
from .jsonlines import JsonLines

# key=value, key="quoted \" value", or a bare key; keys may contain dots, dashes and slashes.
_PAIR = re.compile(r'([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|[^\s"]*))?(?=\s|$)')
_UNESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def parse_pairs(line: str) -> dict[str, str] | None:
    """The pairs of a logfmt line; None unless the whole line is pairs and at least two have values."""
    pairs: dict[str, str] = {}
    pos, valued = 0, 0
    for match in _PAIR.finditer(line):
        if line[pos : match.start()].strip():
            return None  # text between pairs: not logfmt
        key, raw = match.group(1), match.group(2)
        if raw is None:
            pairs[key] = "true"
        else:
            valued += 1
            if raw.startswith('"'):
                raw = _UNESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), raw[1:-1])
            pairs[key] = raw
        pos = match.end()
    if line[pos:].strip() or valued < 2:
        return None
    return pairs


class Logfmt:
    name = "logfmt"

    def __init__(self, names: FieldNames, default_tz: tzinfo) -> None:
        self._json = JsonLines(names, default_tz)

    def parse(self, line: str) -> ParsedLine | None:
        pairs = parse_pairs(line)
        if pairs is None:
            return None
        return self._json.from_record(dict(pairs))
