"""Events, not lines: which lines continue the event above them (Java stack traces, Python
tracebacks), and the exception chain they spell."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .events import ExceptionInfo

# `java.sql.SQLException: msg`, `io.grpc.StatusRuntimeException: UNAVAILABLE`, `ValueError: bad`.
_EXCEPTION = re.compile(
    r"^((?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:Exception|Error|Throwable|Fault|Warning|Exit|Interrupt)"
    r"[\w$]*)(?::\s?(.*))?$"
)
_CAUSED = re.compile(r"^Caused by:\s*(.*)$")
TRACEBACK = "Traceback (most recent call last):"
_PY_CHAINING = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
# The line that closes a Python traceback: any dotted name, optionally `: message`.
_PY_LAST = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::\s?(.*))?$")


class Continuations:
    """Decides, line by line, whether a line that starts no event of its own continues the last one.
    It keeps one bit of state: inside a Python traceback, the closing `Name: message` line belongs
    to it even when the exception's name ends in no familiar suffix (`KeyError` does, `Timeout` not)."""

    def __init__(self) -> None:
        self._in_traceback = False

    def reset(self) -> None:
        self._in_traceback = False

    def accepts(self, line: str) -> bool:
        if not line.strip():
            return False
        if line[0] in " \t":
            return True  # frames (`\tat ...`, `  File ...`), `... 12 more`, indented Caused by
        if line.startswith(TRACEBACK):
            self._in_traceback = True
            return True
        if line.startswith(_PY_CHAINING) or _CAUSED.match(line):
            return True
        if self._in_traceback and _PY_LAST.match(line):
            self._in_traceback = False
            return True
        return _EXCEPTION.match(line) is not None


def continues_only(line: str) -> bool:
    """A line that can only continue an event, whatever came before: frames, `Caused by:`, the
    start of a Python traceback, an exception line (the stateless part of Continuations)."""
    return (
        line[:1] in (" ", "\t")
        or line.startswith((TRACEBACK, *_PY_CHAINING))
        or _CAUSED.match(line) is not None
        or _EXCEPTION.match(line) is not None
    )


def _info(text: str) -> ExceptionInfo:
    match = _PY_LAST.match(text) or _EXCEPTION.match(text)
    if match is None:
        return ExceptionInfo(text.strip(), "")
    return ExceptionInfo(match.group(1), (match.group(2) or "").strip())


def exception_chain(lines: Iterable[str]) -> tuple[ExceptionInfo, ...]:
    """Outermost exception first, then each cause: Java prints the outermost first and its causes as
    `Caused by:`; Python prints the cause first and the outermost last."""
    java: list[ExceptionInfo] = []
    python: list[ExceptionInfo] = []
    in_traceback = False
    for line in lines:
        if not line.strip() or line[0] in " \t":
            continue
        if line.startswith(TRACEBACK):
            in_traceback = True
        elif in_traceback:
            if _PY_LAST.match(line):
                python.append(_info(line))
                in_traceback = False
        elif caused := _CAUSED.match(line):
            java.append(_info(caused.group(1)))
        elif not java and not line.startswith(_PY_CHAINING) and _EXCEPTION.match(line):
            java.append(_info(line))
    return (*java, *reversed(python))
