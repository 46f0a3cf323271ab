"""JSON lines: one object per line, core fields found through configurable alias lists."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import tzinfo
from typing import Any, cast

from .events import ParsedLine, http_status_level, normalize_level, parse_time
from .lanes import Lane, Plan, json_lane
from .log_config import FieldNames

_MISSING = object()
# json.loads's own C scanner, called directly: one call per line instead of loads' Python layers.
_SCAN = cast("Callable[[str, int], tuple[Any, int]]", json.JSONDecoder().scan_once)  # type: ignore[attr-defined]
_TRAILING = " \t\n\r"  # what json.loads allows after the value
# What quick() reads of a line: time, level, service as written, and whether no message field
# is present (the message is then composed of the other fields).
Quick = tuple[str, str | None, str | None, bool]


def lookup(record: dict[str, Any], key: str) -> Any:
    """A literal key first (`log.level`), then the dotted path (`kubernetes.labels.app`)."""
    if key in record:
        return record[key]
    if "." not in key:
        return _MISSING
    node: Any = record
    parts = key.split(".")
    i = 0
    while i < len(parts):
        if not isinstance(node, dict):
            return _MISSING
        # Label keys contain dots themselves (`app.kubernetes.io/name`): try the longest key first.
        for j in range(len(parts), i, -1):
            candidate = ".".join(parts[i:j])
            if candidate in node:
                node, i = node[candidate], j
                break
        else:
            return _MISSING
    return node


_SCALARS = (bool, int, float)


def text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, _SCALARS):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


_CONTAINERS = (dict, list)  # a tuple: `dict | list` would build a new union at every call


def _usable(value: Any) -> bool:
    # An object under a core name (ECS `service: {name: ...}`) is no value: a deeper alias may be.
    return value is not _MISSING and value is not None and value != "" and not isinstance(value, _CONTAINERS)


_ABSENT, _SEARCH = "", "\0search"
_PLANS = 256  # record shapes remembered per file format


def _plan(record: dict[str, Any], keys: tuple[str, ...]) -> str:
    """What the alias search comes to for every record with these keys in this order: no alias
    present at all (_ABSENT), one top-level key that wins whenever its value is usable, or _SEARCH.
    Records of one file share a handful of shapes, so the search runs once per shape."""
    present = [k for k in keys if k in record or k.split(".", 1)[0] in record]
    if not present:
        return _ABSENT
    return present[0] if present[0] in record and "." not in present[0] else _SEARCH


def _text(value: Any) -> str | None:
    return None if value is None else text_of(value)


class JsonLines:
    name = "json"

    def __init__(
        self, names: FieldNames, default_tz: tzinfo, *, light: bool = False, with_message: bool = False
    ) -> None:
        self._names = names
        self._roles = (names.time, names.level, names.message, names.service, names.exception)
        self._tz = default_tz
        self._plans: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._light = light
        self._with_message = with_message

    def light(self, with_message: bool = False) -> JsonLines:
        """The same format reading only time, level and service (what indexing a file needs), and
        the message with `with_message` (what mining templates needs)."""
        return JsonLines(self._names, self._tz, light=True, with_message=with_message)

    def parse(self, line: str) -> ParsedLine | None:
        """None when the line is not a JSON object."""
        if not line.startswith("{"):
            return None
        try:
            record = json.loads(line)
        except ValueError:
            return None
        return self.from_record(record) if isinstance(record, dict) else None

    def quick(self, line: str) -> Quick | None:
        """What indexing needs of a line whose core fields are the commonest shape (each a direct
        key holding a non-empty string, or absent), exactly as parse() would read them; None
        for any other line, which parse() then reads."""
        if not line.startswith("{"):
            return None
        try:
            record, end = _SCAN(line, 0)
        except (StopIteration, ValueError):
            return None
        if end != len(line) and line[end:].strip(_TRAILING):
            return None
        return self.quick_record(record) if type(record) is dict else None

    def quick_record(self, record: dict[str, Any]) -> Quick | None:
        plan = self._plans.get(shape := tuple(record))
        if plan is None:
            plan = tuple(_plan(record, keys) for keys in self._roles)
            if len(self._plans) < _PLANS:
                self._plans[shape] = plan
        got: list[str | None] = [None, None, None, None]
        for role in range(4):
            step = plan[role]
            if step is _ABSENT:
                continue
            if step is _SEARCH:
                return None
            value = record[step]
            if role == 1 and type(value) is int and 100 <= value <= 599:
                got[role] = str(value)  # an access record's HTTP status: read as its text would be
                continue
            if type(value) is not str or not value:
                return None  # an alias further down the list may hold it: parse() searches
            got[role] = value
        stamp = got[0]
        if stamp is None:
            return None
        return stamp, got[1], got[3], got[2] is None

    def lane(self, line: str) -> Lane | None:
        """The lane of this line's record shape (lanes.py), when quick() reads the line."""
        if self.quick(line) is None:
            return None
        record, _ = _SCAN(line, 0)
        plan = self.lane_plan(record)
        return json_lane(tuple(record), plan) if plan is not None else None

    def lane_plan(self, record: dict[str, Any]) -> Plan | None:
        """Which keys hold the time, level, service and message of every record of this shape, as
        quick() reads them; None when a role needs the alias search."""
        plan = self._plans.get(tuple(record)) or tuple(_plan(record, keys) for keys in self._roles)
        if _SEARCH in plan[:4]:
            return None
        time, level, message, service = (step or None for step in plan[:4])
        return time, level, service, message

    def from_record(self, record: dict[str, Any]) -> ParsedLine:
        used: set[str] = set()
        plan = self._plans.get(shape := tuple(record))
        if plan is None:
            plan = tuple(_plan(record, keys) for keys in self._roles)
            if len(self._plans) < _PLANS:
                self._plans[shape] = plan

        keys: dict[int, str] = {}  # role → the key that held it

        def first(role: int) -> Any:
            step = plan[role]
            if step is _ABSENT:
                return None
            if step is not _SEARCH:
                value = record[step]
                if _usable(value):
                    used.add(step)
                    keys[role] = step
                    return value
            for key in self._roles[role]:
                value = lookup(record, key)
                if _usable(value):
                    if key in record:  # a nested object stays in the fields whole
                        used.add(key)
                        keys[role] = key
                    return value
            return None

        # A direct key holding a non-empty string (most records) needs no search.
        got: list[Any] = [None] * 5
        for role in range(5 if not self._light else 4):
            step = plan[role]
            if step is _ABSENT:
                continue
            if step is not _SEARCH and type(value := record[step]) is str and value:
                used.add(step)
                keys[role] = step
                got[role] = value
            else:
                got[role] = first(role)
        if self._light and not (self._with_message and got[2] is None):  # no fields wanted
            stamp, level, service = parse_time(got[0], self._tz), normalize_level(got[1]), _text(got[3])
            message = text_of(got[2]).rstrip("\n") if self._with_message else ""
            return ParsedLine(stamp, level, message, service, composed=got[2] is None)
        # (a message composed of the other fields needs them all, read below)
        stamp, level, message, service, exception = got
        if 1 in keys and (normalize_level(level) is None or http_status_level(level)):
            used.discard(keys[1])  # no level word (`status: 503`, `status: "done"`): a field too
        fields = {k: text_of(v) for k, v in record.items() if k not in used and v is not None}
        composed = message is None
        if composed:  # nginx-style records: the record itself is the message
            message = " ".join(f"{k}={v}" for k, v in fields.items())
        return ParsedLine(
            timestamp=parse_time(stamp, self._tz),
            level=normalize_level(level),
            message=text_of(message).rstrip("\n"),
            service=_text(service),
            fields=fields,
            exception_text=_text(exception),
            composed=composed,
        )
