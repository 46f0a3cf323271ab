"""Reading the time, level and service of many lines at once: a lane is a regex matching a line
of one of the file's commonest shapes and capturing those three. The lanes of a file are joined
into one regex, run over a whole chunk by one `findall` (one row per line), so that no Python code
runs per line.

A lane accepts only lines the format's quick() reads the same way (the same three texts), and
no lane crosses a newline; any other line takes the one-line-at-a-time path.

- A user pattern: its own regex, from the line's start (what quick() runs). Should it ever match
  across a newline, the rows no longer count the lines and the chunk is read one line at a time.
- JSON: the keys of one record shape in their order, every value a plain JSON scalar (no object or
  array), the time, level and service values strings without escapes (their text is then the
  decoded value), the message a non-empty string. Such a line is valid JSON with those keys once
  each, and the record's plan (which key holds each role) is that of the shape.
- logfmt: the keys of one line shape in their order, each pair as `_PLAIN_PAIR` reads it: the line
  is then tiled by those pairs and no others, and read as that dict.

JSON and logfmt lanes (ours) read the chunk's bytes, undecoded (`read_bytes`): their classes are
defined by ASCII characters and bounded by ASCII delimiters, so on a line of UTF-8 they match as
over its text, except that `\\s` there also holds the whitespace beyond ASCII (U+00A0, U+3000...).
So the lines holding bytes beyond ASCII are decoded (together): a line that is not UTF-8, or holds
such whitespace, is read by no lane (the one-line path reads it). A user pattern's lane, whose
regex may say anything, reads the decoded text."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Any

import numpy as np

# A JSON string without escapes (its text is its value: group `@`), any, and any non-empty one.
_PLAIN = r'"(?P<@>[^"\\\x00-\x1f]+)"'
_STRING = r'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'
_NONEMPTY = r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*"'  # noqa: E501
_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_SCALAR = rf"(?:{_STRING}|{_NUMBER}|true|false|null)"
_KEY_SAFE = re.compile(r'[^"\\\x00-\x1f]+')
# logfmt values as _PLAIN_PAIR reads them: any, a non-empty one, and one captured without its
# quotes or as it is (group `@`): a lane takes a role's value quoted or not as its line did, so
# that each role is one group (a line quoting it the other way is another shape).
_KV_ANY = r'(?:"[^"\\\n]*"|[^\s"]*)'
_KV_NONEMPTY = r'(?:"[^"\\\n]+"|[^\s"]+)'
_KV_QUOTED_ROLE = r'"(?P<@>[^"\\\n]+)"'
_KV_BARE_ROLE = r'(?P<@>[^\s"]+)'
_KV_KEY = re.compile(r'[^\s="\\]+')
_ROLES = ("t", "l", "s")
_WIDE_SPACE = re.compile(r"[^\S\x00-\x7f]")  # whitespace beyond ASCII, as `\s` over text has it


@dataclass(frozen=True)
class Lane:
    """One line shape: a regex source whose groups named `times` (the first non-empty one), `level`
    and `service` hold what quick() reads."""

    pattern: str
    times: tuple[str, ...]
    level: tuple[str, ...]  # its group; () when absent
    service: tuple[str, ...]
    composed: bool = False  # the shape has no message: quick() says so of every line
    whole: bool = True  # the pattern matches to the line's end (else the rest of the line follows)


def pattern_lane(regex: re.Pattern[str]) -> Lane | None:
    """A user pattern's lane: its own regex and its time, level and service groups."""
    names = regex.groupindex
    times = tuple(name for name in ("timestamp", "time") if name in names)
    if not times:
        return None
    level = ("level",) if "level" in names else ()
    service = ("service",) if "service" in names else ()
    return Lane(_roles_only(regex.pattern, {*times, *level, *service}), times, level, service, whole=False)


_NAMED_GROUP = re.compile(r"(?<!\\)\(\?P<(\w+)>")


def _roles_only(pattern: str, roles: set[str]) -> str:
    """The pattern with its other named groups made non-capturing: the same matches, but a chunk's
    `findall` no longer copies out each line's message, thread, logger... (unchanged when a group
    is referred back to, or when the result would not compile)."""
    if "(?P=" in pattern:
        return pattern
    stripped = _NAMED_GROUP.sub(lambda m: m.group(0) if m.group(1) in roles else "(?:", pattern)
    try:
        re.compile(stripped)
    except re.error:
        return pattern
    return stripped


# Where a shape's roles are: the keys of the time, level, service and message (None: absent).
Plan = tuple[str | None, str | None, str | None, str | None]


def json_lane(keys: tuple[str, ...], plan: Plan) -> Lane | None:
    """The lane of a JSON record shape; None when a key cannot be spelled without escapes."""
    if plan[0] is None or not all(_KEY_SAFE.fullmatch(key) for key in keys):
        return None
    parts = []
    for key in keys:
        role = _role(key, plan)
        value = _PLAIN.replace("@", role) if role else _NONEMPTY if key == plan[3] else _SCALAR
        if role == "l":  # or an access record's HTTP status, a number (quick() reads it as text)
            value = f"(?:{value}|(?P<n>[1-5][0-9][0-9]))"
        parts.append(f" *{re.escape(json.dumps(key, ensure_ascii=False))} *: *{value}")
    lane = _lane(r"\{" + " *,".join(parts) + r" *\} *", plan)
    return replace(lane, level=("l", "n")) if lane.level else lane


def logfmt_lane(keys: tuple[str, ...], plan: Plan, quoted: frozenset[str] = frozenset()) -> Lane | None:
    """The lane of a logfmt line shape: its keys in order, each once, two at least; the roles'
    values quoted where `quoted` names their keys, bare elsewhere."""
    if plan[0] is None or len(keys) < 2 or len(set(keys)) != len(keys):
        return None
    if not all(_KV_KEY.fullmatch(key) for key in keys):
        return None
    parts = []
    for key in keys:
        role = _role(key, plan)
        if role:
            value = (_KV_QUOTED_ROLE if key in quoted else _KV_BARE_ROLE).replace("@", role)
        else:
            value = _KV_NONEMPTY if key == plan[3] else _KV_ANY
        parts.append(f"{re.escape(key)}={value}")
    return _lane(" +".join(parts) + " *", plan)


def _role(key: str, plan: Plan) -> str | None:
    for name, role in zip(_ROLES, plan[:3], strict=True):
        if key == role:
            return name
    return None


def _lane(pattern: str, plan: Plan) -> Lane:
    def groups(name: str, key: str | None) -> tuple[str, ...]:
        return () if key is None else (name,)

    return Lane(pattern, groups("t", plan[0]), groups("l", plan[1]), groups("s", plan[2]), plan[3] is None)


@dataclass(frozen=True)
class Reads:
    """What the lanes read of each line of a chunk ("" where they read nothing)."""

    times: list[str]
    levels: list[str]
    services: list[str]
    composed: list[str]  # the time, where a lane of a shape without a message read the line
    undecodable: tuple[int, ...] = ()  # lines read over bytes that are not UTF-8 (no lane read them)


class Lanes:
    """The lanes of one file, learned from lines quick() reads (a user pattern has its own from
    the start), at most MAX_LANES, joined into one regex: `^(?:lane)$|...|^.*$`, one row a line."""

    MAX_LANES = 8

    def __init__(self, line_format: object) -> None:
        self._make: Callable[[str], Lane | None] | None = getattr(line_format, "lane", None)
        self.lanes: list[Lane] = []
        self._regex: re.Pattern[str] | None = None
        self._bytes: re.Pattern[bytes] | None = None  # the same over bytes: our lanes only

    @property
    def possible(self) -> bool:
        return self._make is not None

    def learn(self, lines: list[str]) -> bool:
        """Adds the lanes of these lines' shapes not known yet; whether any was added."""
        added = False
        for line in lines:
            lane = self._make(line) if self._make is not None else None
            if lane is None or lane in self.lanes or len(self.lanes) >= self.MAX_LANES:
                continue
            self.lanes.append(lane)
            added = True
        if added:
            self._regex = self._join()
            self._bytes = None
            if self._regex is not None and all(lane.whole for lane in self.lanes):
                self._bytes = re.compile(self._regex.pattern.encode())
        return added

    @property
    def over_bytes(self) -> bool:
        """Whether the lanes read a chunk's bytes undecoded (read_bytes)."""
        return self._bytes is not None

    def _join(self) -> re.Pattern[str] | None:
        alternatives = []
        for k, lane in enumerate(self.lanes):
            pattern = _renamed(lane, k) if lane.whole else lane.pattern
            alternatives.append(f"^(?:{pattern})" + ("$" if lane.whole else ".*$"))
        try:  # a user pattern may not join (global flags, a group named as ours)
            return re.compile("(?m)" + "|".join((*alternatives, "^(?P<_>).*$")))
        except re.error:
            return None

    def read(self, text: str, count: int) -> Reads | None:
        """The rows of the `count` lines of `text` (a chunk ending in a newline, read as if that
        newline were not there); None when no lane is known or the rows do not count the lines
        (a match crossed a newline)."""
        regex = self._regex
        if regex is None:
            return None
        rows = regex.findall(text, 0, len(text) - 1)  # a tuple per line: there is always more than one group
        if len(rows) != count:
            return None
        times, levels, services, composed = self._columns(rows, count, "")
        return Reads(times, levels, services, composed)

    def read_bytes(self, body: bytes, ends: np.ndarray) -> Reads | None:
        """read() over the chunk's bytes (`ends`: where each line ends, its newline included),
        the texts decoded once read; lines not UTF-8 or holding whitespace beyond ASCII are read
        by no lane, the first noted as undecodable."""
        regex = self._bytes
        if regex is None:
            return None
        count = len(ends)
        rows = regex.findall(body, 0, len(body) - 1)
        if len(rows) != count:
            return None
        undecodable: list[int] = []
        if not body.isascii():
            blank = (b"",) * regex.groups
            for i in self._unsure(body, ends, undecodable):
                rows[i] = blank
        times, levels, services, composed = self._columns(rows, count, b"")
        return Reads(
            list(map(bytes.decode, times)),
            _decoded(levels),
            _decoded(services),
            _decoded(composed),
            tuple(undecodable),
        )

    @staticmethod
    def _unsure(body: bytes, ends: np.ndarray, undecodable: list[int]) -> list[int]:
        """The lines holding bytes beyond ASCII that are not UTF-8 (noted) or hold whitespace
        beyond ASCII: decoded together, one by one only when that fails."""
        high = np.flatnonzero(np.frombuffer(body, np.uint8) >= 128)
        runs = high[np.concatenate(([True], np.diff(high) != 1))]  # each run's first byte
        found = np.searchsorted(ends, runs, side="right")
        lines = found[np.concatenate(([True], found[1:] != found[:-1]))].tolist()
        bounds = ends.tolist()
        pieces = [body[(bounds[i - 1] if i else 0) : bounds[i] - 1] for i in lines]
        unsure: list[int] = []
        try:
            text = b"\n".join(pieces).decode()
        except UnicodeDecodeError:
            for i, piece in zip(lines, pieces, strict=True):
                try:
                    if _WIDE_SPACE.search(piece.decode()):
                        unsure.append(i)
                except UnicodeDecodeError:
                    undecodable.append(i)
                    unsure.append(i)
            return unsure
        if _WIDE_SPACE.search(text):
            unsure = [i for i, piece in zip(lines, pieces, strict=True) if _WIDE_SPACE.search(piece.decode())]
        return unsure

    def _columns(self, rows: list[Any], count: int, empty: Any) -> tuple[list[Any], ...]:
        """The rows' time, level, service and composed columns (texts, or bytes read over bytes)."""
        regex = self._regex
        assert regex is not None
        index = regex.groupindex
        columns: dict[str, list[Any]] = {}

        def column(name: str) -> list[Any]:
            """One group's texts, line by line: only the groups wanted are taken out of the rows,
            in C (cheaper than transposing every group of every row)."""
            found = columns.get(name)
            if found is None:
                found = columns[name] = list(map(itemgetter(index[name] - 1), rows))
            return found

        def merged(names: list[str]) -> list[Any]:
            """Groups of which a line fills one at most (alternatives, or other lanes'), merged."""
            found = [column(name) for name in names]
            if not found:
                return [empty] * count
            if len(found) == 1:  # one lane: its column as it is (nobody writes to it)
                return found[0]
            out = list(found[0])
            for other in found[1:]:
                out = _either(out, other)
            return out

        times: list[Any] = []
        composed: list[Any] = []
        for k, lane in enumerate(self.lanes):
            names = [_name(lane, k, g) for g in lane.times]
            if lane.whole:  # our own lanes: one time group
                lane_times = merged(names)
            else:  # a user pattern: the first non-empty of its time groups
                found = [column(name) for name in names]
                lane_times = found[0]
                for later in found[1:]:
                    lane_times = [t or u for t, u in zip(lane_times, later, strict=True)]
            times = lane_times if not times else _either(times, lane_times)
            if lane.composed:
                composed = lane_times if not composed else _either(composed, lane_times)
        levels = merged([_name(lane, k, g) for k, lane in enumerate(self.lanes) for g in lane.level])
        services = merged([_name(lane, k, g) for k, lane in enumerate(self.lanes) for g in lane.service])
        return times, levels, services, composed or [empty] * count


def _decoded(column: list[bytes]) -> list[str]:
    """A column of few distinct texts (levels, services), each decoded once."""
    texts = {raw: raw.decode() for raw in set(column)}
    return list(map(texts.__getitem__, column))


def _either(one: list[Any], other: list[Any]) -> list[Any]:
    """Line by line, the text of whichever of two groups was filled (a line fills one at most)."""
    return [a or b for a, b in zip(one, other, strict=True)]


def _name(lane: Lane, k: int, group: str) -> str:
    return group if not lane.whole else f"{group}{k}"


def _renamed(lane: Lane, k: int) -> str:
    """Our lanes' groups numbered by the lane (a user pattern is always alone)."""
    pattern = lane.pattern
    for group in (*lane.times, *lane.level, *lane.service):
        pattern = pattern.replace(f"(?P<{group}>", f"(?P<{group}{k}>")
    return pattern
