"""Container runtimes' wrappers around an application's line: CRI (`<time> <stream> <P|F> <msg>`,
what containerd and CRI-O write under /var/log/pods) and Docker's json-file
(`{"log": "...\n", "stream": "stdout", "time": "..."}`). Both split long lines into partial
records; the Joiner glues them back before the application's own format is parsed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from .events import parse_time

_CRI = re.compile(r"^(\d{4}-\d\d-\d\dT\S+) (stdout|stderr) ([PF])(?::\S*)? ?(.*)$", re.DOTALL)
DOCKER_SERVICE_KEYS = ("com.docker.compose.service", "io.kubernetes.container.name", "service", "app", "tag")


@dataclass
class Fragment:
    """One decoded record of the runtime's file."""

    time: datetime | None
    stream: str
    text: str
    partial: bool
    attrs: dict[str, str] = field(default_factory=dict)


def cri_fragment(line: str) -> Fragment | None:
    match = _CRI.match(line)
    if match is None:
        return None
    stamp, stream, tag, text = match.groups()
    moment = parse_time(stamp)
    if moment is None:
        return None
    return Fragment(moment, stream, text, tag == "P")


def docker_fragment(line: str) -> Fragment | None:
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("log"), str):
        return None
    text: str = record["log"]
    partial = not text.endswith("\n")
    raw_attrs = record.get("attrs")
    attrs = {str(k): str(v) for k, v in raw_attrs.items()} if isinstance(raw_attrs, dict) else {}
    return Fragment(
        parse_time(record.get("time")), str(record.get("stream", "")), text.rstrip("\r\n"), partial, attrs
    )


def looks_like(container: str, line: str) -> bool:
    return (cri_fragment if container == "cri" else docker_fragment)(line) is not None


@dataclass
class Joined:
    """An application line rebuilt from one or more fragments, located at its first fragment."""

    line: int
    offset: int
    fragment: Fragment
    partial_join: bool


class Joiner:
    """Collects partial fragments until the final one; the result keeps the first fragment's time."""

    def __init__(self, container: str) -> None:
        self._decode = cri_fragment if container == "cri" else docker_fragment
        self._parts: list[str] = []
        self._first: tuple[int, int, Fragment] | None = None

    def feed(self, line: int, offset: int, text: str) -> Joined | Literal[False] | None:
        """A whole line (Joined), None while a partial line is pending, False if not this format."""
        fragment = self._decode(text)
        if fragment is None:
            return False
        if self._first is None:
            self._first = (line, offset, fragment)
        self._parts.append(fragment.text)
        return None if fragment.partial else self.flush()

    def flush(self) -> Joined | None:
        """The pending line (at end of input a partial line is all there will be)."""
        if self._first is None:
            return None
        line, offset, first = self._first
        joined = len(self._parts) > 1
        text = "".join(self._parts)
        self._first, self._parts = None, []
        return Joined(line, offset, Fragment(first.time, first.stream, text, False, first.attrs), joined)
