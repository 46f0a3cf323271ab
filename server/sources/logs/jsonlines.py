"""JSON lines: one object per line, core fields found through configurable alias lists."""

from __future__ import annotations

import json
from datetime import tzinfo
from typing import Any

from .config import FieldNames
from .events import ParsedLine, normalize_level, parse_time

_MISSING = object()


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


def text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class JsonLines:
    name = "json"

    def __init__(self, names: FieldNames, default_tz: tzinfo) -> None:
        self._names = names
        self._tz = default_tz

    def parse(self, line: str) -> ParsedLine | None:
        """None when the line is not a JSON object."""
        if not line.startswith("{"):
            return None
        try:
            record = json.loads(line)
        except ValueError:
            return None
        return self.from_record(record) if isinstance(record, dict) else None

    def from_record(self, record: dict[str, Any]) -> ParsedLine:
        used: set[str] = set()

        def first(keys: tuple[str, ...]) -> Any:
            for key in keys:
                value = lookup(record, key)
                # An object under a core name (ECS `service: {name: ...}`) is no value: try deeper.
                if value is not _MISSING and value not in (None, "") and not isinstance(value, dict | list):
                    if key in record:  # a nested object stays in the fields whole
                        used.add(key)
                    return value
            return None

        stamp = first(self._names.time)
        level = first(self._names.level)
        message = first(self._names.message)
        service = first(self._names.service)
        exception = first(self._names.exception)
        fields = {k: text_of(v) for k, v in record.items() if k not in used and v is not None}
        composed = message is None
        if composed:  # nginx-style records: the record itself is the message
            message = " ".join(f"{k}={v}" for k, v in fields.items())
        return ParsedLine(
            timestamp=parse_time(stamp, self._tz),
            level=normalize_level(level),
            message=text_of(message).rstrip("\n"),
            service=None if service is None else text_of(service),
            fields=fields,
            exception_text=None if exception is None else text_of(exception),
            composed=composed,
        )
