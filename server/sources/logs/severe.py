"""Rare severe events: the lines a reader must see however seldom they occur — a FATAL or panic, an
out-of-memory kill, an exception class, a restart, a new version starting, a configuration reload.
A summary ranked by count drowns them under the frequent lines; `summarize_logs` lists them on their
own, each with the kind that made it severe.

`KEYWORDS` are literals for the byte search (one pass each over the service's blocks), so lines
below the summary's level (a reload logged at INFO) are found too; `kind` then says which of them
really is one.
"""

from __future__ import annotations

import re

# Case-insensitive literals a severe line holds; each is searched as bytes (one pass each, so the
# fewest that find the family). The out-of-memory family as each program words it: Java's
# OutOfMemoryError, the kernel's "Out of memory: Killed process" and "invoked oom-killer",
# Kubernetes' OOMKilled, Redis's "OOM command not allowed", and ENOMEM's message "Cannot allocate
# memory" (Redis's failed fork, logged at warning level).
KEYWORDS = (
    "panic", "fatal", "outofmemory", "out of memory", "oomkill", "oom-kill", "oom command",
    "cannot allocate memory", "restart", "reload", "exception", "starting ",
)  # fmt: skip

_OUT_OF_MEMORY = (
    r"OutOfMemory|out of memory|\bOOM(?:Kill(?:ed)?)?\b|oom[-_ ]?kill|cannot allocate memory|\bENOMEM\b"
)
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("out of memory", re.compile(_OUT_OF_MEMORY, re.I)),
    ("panic", re.compile(r"\bpanic(?:ked)?\b", re.I)),
    ("fatal", re.compile(r"\bfatal\b", re.I)),
    ("exception", re.compile(r"\b[A-Z][\w$]*(?:Exception|Error)\b")),
    ("restart", re.compile(r"\brestart(?:ed|ing|s)?\b|\bback-?off restarting\b", re.I)),
    # A process starting with its version (`Starting OrderRouterApplication v2.15.0`): a deploy.
    ("version start", re.compile(r"\bstarting\b.{0,80}?\bv?\d+\.\d+\.\d+\b", re.I)),
    (
        "configuration reload",
        re.compile(r"\breload(?:ed|ing)?\b.{0,40}\bconf|\bconf\w*\b.{0,40}\breload", re.I),
    ),
)


def kind(message: str, level: str | None) -> str | None:
    """Why this event is severe, or None: its level FATAL, or a severe word in its message."""
    for name, regex in _KINDS:
        if regex.search(message):
            return name
    return "fatal" if level == "FATAL" else None
