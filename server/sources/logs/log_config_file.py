"""The `logs` section of a config file (TOML or JSON) → LogConfig: field-name aliases, user
patterns, default time zone and level, and the root when no flag or environment variable names it.

    [logs]
    root = "/var/log"                  # --logs-dir / EVIGATE_LOGS_DIR win over it
    default_tz = "Asia/Shanghai"       # IANA name or a fixed offset such as "+08:00"
    default_level = "INFO"
    [logs.fields]                      # tried before the built-in aliases
    time = ["event_time"]
    service = ["kubernetes.labels.component"]
    [[logs.patterns]]
    name = "billing"
    regex = '(?P<timestamp>\\S+ \\S+) (?P<level>[A-Z]+) (?P<message>.*)'
    time_format = "%Y/%m/%d %H:%M:%S"  # optional strptime format

A malformed section is a LogConfigError naming the key, raised at start-up, never at query time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from evigate.rules.errors import EvigateError
from evigate.server.config_document import ConfigDocumentError, read_document, section

from .events import LEVELS, normalize_level
from .log_config import FieldNames, LogConfig, UserPattern

_ROLES = ("time", "level", "message", "service", "exception")
_KEYS = frozenset({"root", "default_tz", "default_level", "fields", "patterns"})
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d\d):?(\d\d)$")


class LogConfigError(EvigateError, ValueError):
    """The logs section cannot be used; the message names the key."""


def read_section(path: Path) -> Mapping[str, Any]:
    """The document's `logs` table (server/config_document.py: TOML, JSON or YAML); {} when it has
    none."""
    try:
        return section(read_document(path), "logs", path)
    except ConfigDocumentError as exc:
        raise LogConfigError(str(exc)) from exc


def log_config(root: Path | None, section: Mapping[str, Any], default_root: Path) -> LogConfig:
    """root (flag or environment) > the section's root > default_root (the data dir's logs)."""
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise LogConfigError(f"logs: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    chosen = root or (Path(str(section["root"])).expanduser() if section.get("root") else default_root)
    config = LogConfig(root=chosen)
    if "default_tz" in section:
        config = replace(config, default_tz=zone(section["default_tz"]))
    if "default_level" in section:
        level = normalize_level(section["default_level"])
        if level is None:
            raise LogConfigError(f"logs.default_level: expected one of {', '.join(LEVELS)}")
        config = replace(config, default_level=level)
    if "fields" in section:
        config = replace(config, fields=_fields(section["fields"]))
    if "patterns" in section:
        config = replace(config, patterns=_patterns(section["patterns"]))
    return config


def zone(value: Any) -> tzinfo:
    text = str(value).strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return UTC
    offset = _OFFSET.match(text)
    if offset:
        sign = -1 if offset.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3))))
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise LogConfigError(f"logs.default_tz: unknown time zone {text!r}") from exc


def _names(role: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise LogConfigError(f"logs.fields.{role}: expected a field name or a list of them")
    return tuple(value)


def _fields(value: Any) -> FieldNames:
    if not isinstance(value, Mapping):
        raise LogConfigError("logs.fields: expected a table of role = [field names]")
    unknown = sorted(set(value) - set(_ROLES))
    if unknown:
        known = ", ".join(_ROLES)
        raise LogConfigError(f"logs.fields: unknown role(s) {', '.join(unknown)} (known: {known})")
    defaults = FieldNames()
    merged = {}
    for role in _ROLES:
        given = _names(role, value[role]) if role in value else ()
        builtin: tuple[str, ...] = getattr(defaults, role)
        merged[role] = (*given, *(name for name in builtin if name not in given))
    return FieldNames(**merged)


def _patterns(value: Any) -> tuple[UserPattern, ...]:
    if not isinstance(value, list):
        raise LogConfigError("logs.patterns: expected a list of {name, regex, time_format}")
    out = []
    for number, raw in enumerate(value):
        where = f"logs.patterns[{number}]"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw.get("regex"):
            raise LogConfigError(f"{where}: expected name and regex")
        try:
            compiled = re.compile(str(raw["regex"]))
        except re.error as exc:
            raise LogConfigError(f"{where}.regex: {exc}") from exc
        if "message" not in compiled.groupindex and "msg" not in compiled.groupindex:
            raise LogConfigError(f"{where}.regex: needs a named group message (or msg)")
        time_format = raw.get("time_format")
        out.append(UserPattern(raw["name"], compiled.pattern, str(time_format) if time_format else None))
    return tuple(out)
