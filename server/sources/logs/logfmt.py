"""logfmt (`time=... level=info msg="text with spaces" key=value`), as Go services write it."""

from __future__ import annotations

import re
from datetime import tzinfo
from itertools import chain

from .events import ParsedLine
from .jsonlines import JsonLines, Quick
from .lanes import Lane, logfmt_lane
from .log_config import FieldNames

# key=value, key="quoted \" value", or a bare key; keys may contain dots, dashes and slashes.
_KEY = r"[^\s=]+"
_VALUE = r'"(?:[^"\\]|\\.)*"|[^\s"]*'
# A pair, or (last group) anything else: text between pairs means the line is not logfmt.
_PAIR = re.compile(rf"({_KEY})(?:(=)({_VALUE}))?(?=\s|$)|(\S+)")
# A pair with a plain value (unquoted, or quoted without escapes) and the spaces after it: a line
# these tile from end to end is read by _PAIR the same way, without a Python step per pair.
_PLAIN_PAIR = re.compile(r'([^\s="\\]+)(=)("[^"\\]*"|[^\s"]*)( +|$)')
_UNESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def parse_pairs(line: str) -> dict[str, str] | None:
    """The pairs of a logfmt line; None unless the whole line is pairs and at least two have values."""
    pairs: dict[str, str] = {}
    valued = 0
    for key, equals, raw, junk in _PAIR.findall(line):
        if junk:
            return None
        if not equals:
            pairs[key] = "true"
            continue
        valued += 1
        value = raw[1:-1] if raw.startswith('"') else raw
        if raw.startswith('"') and "\\" in value:
            value = _UNESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), value)
        pairs[key] = value
    return pairs if valued >= 2 else None


class Logfmt:
    name = "logfmt"

    def __init__(
        self, names: FieldNames, default_tz: tzinfo, *, json_format: JsonLines | None = None
    ) -> None:
        self._json = json_format or JsonLines(names, default_tz)
        self._names, self._tz = names, default_tz

    def light(self, with_message: bool = False) -> Logfmt:
        """The same format reading only time, level and service (and the message): see JsonLines."""
        return Logfmt(self._names, self._tz, json_format=self._json.light(with_message))

    def quick(self, line: str) -> Quick | None:
        """What indexing needs of a line of plain pairs (see JsonLines.quick); None otherwise."""
        found = _PLAIN_PAIR.findall(line)
        if len(found) < 2 or "".join(chain.from_iterable(found)) != line:
            return None
        pairs = {key: value[1:-1] if value[:1] == '"' else value for key, _, value, _ in found}
        return self._json.quick_record(pairs)

    def lane(self, line: str) -> Lane | None:
        """The lane of this line's shape (lanes.py), when quick() reads the line."""
        if self.quick(line) is None:
            return None
        pairs = _PLAIN_PAIR.findall(line)
        keys = tuple(key for key, _, _, _ in pairs)
        quoted = frozenset(key for key, _, value, _ in pairs if value[:1] == '"')
        plan = self._json.lane_plan(dict.fromkeys(keys, ""))
        return logfmt_lane(keys, plan, quoted) if plan is not None else None

    def parse(self, line: str) -> ParsedLine | None:
        pairs = parse_pairs(line)
        if pairs is None:
            return None
        return self._json.from_record(pairs)
