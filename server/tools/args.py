"""Argument schemas (OpenAI function calling) and their validation, shared by every tool.

Arguments come from an LLM or a rule-based executor: anything may arrive. Validation turns them into
checked, stripped values or raises ArgumentError with a message the caller can act on; the call is
then recorded as failed with that message. A tool declares its properties with the helpers here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from evigate.rules.errors import EvigateError
from evigate.server.queries.types import JSON, TimeWindow

MAX_TEXT = 500  # characters of any string argument; a regex longer than this is refused too
_RELATIVE = re.compile(r"^-?(\d+)\s*([smhd])$")
# A UTC time of day ("06:30"): as `since` or `at`, the latest such moment not after now; as `until`
# after a `since`, the first one after it ("since 22:00 until 02:00" spans midnight).
_CLOCK = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

# A day named from now's: "today", "yesterday", or a weekday (the latest one before today: "last
# Tuesday"), at 00:00 UTC or at the time of day after it ("yesterday 18:00").
_DAY = re.compile(
    r"^(today|yesterday|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"(?:\s+([01]?\d|2[0-3]):([0-5]\d))?$"
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

TIME_DOC = (
    'ISO-8601 UTC time ("2026-07-08T23:00:00Z"), "now", a duration before now ("30m", "2h", "1d"), '
    'a UTC time of day ("06:30": the latest one before now), or a day with an optional time of day '
    '("today", "yesterday 18:00", "tuesday": the latest Tuesday before today)'
)
STRING: JSON = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT}
WINDOW: JSON = {
    "since": {**STRING, "description": f"start of the time window: {TIME_DOC}"},
    "until": {**STRING, "description": f"end of the time window: {TIME_DOC}"},
}


class ArgumentError(EvigateError, ValueError):
    """The arguments do not fit the tool's schema."""


def limit(default: int, maximum: int) -> JSON:
    """The `limit` property every listing tool takes."""
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "description": f"maximum items returned (default {default}); the total is reported",
    }


def validate(
    properties: Mapping[str, JSON],
    required: Sequence[str],
    arguments: Mapping[str, Any],
    clean: Callable[[str, str], str],
) -> JSON:
    """Checks keys and types; returns the arguments with strings stripped (the dedup key).

    `clean(key, text)` is the tool's own normalization of a stripped string (aliases, case); it may
    raise ArgumentError. Enumerations are checked after it.
    """
    if not isinstance(arguments, Mapping):
        raise ArgumentError("arguments must be a JSON object")
    unknown = sorted(str(k) for k in arguments if k not in properties)
    if unknown:
        raise ArgumentError(f"unknown argument(s) {', '.join(unknown)}; allowed: {', '.join(properties)}")
    for key in required:
        if arguments.get(key) is None:
            raise ArgumentError(f"missing required argument {key!r}")
    out: JSON = {}
    for key, value in arguments.items():
        if value is None:
            continue
        spec = properties[key]
        if spec["type"] == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ArgumentError(f"{key} must be an integer, got {type(value).__name__}")
            if not spec["minimum"] <= value <= spec["maximum"]:
                raise ArgumentError(f"{key} must be between {spec['minimum']} and {spec['maximum']}")
            out[key] = value
            continue
        if spec["type"] == "boolean":
            if not isinstance(value, bool):
                raise ArgumentError(f"{key} must be true or false, got {type(value).__name__}")
            out[key] = value
            continue
        if not isinstance(value, str):
            raise ArgumentError(f"{key} must be a string, got {type(value).__name__}")
        text = value.strip()
        if not text:
            raise ArgumentError(f"{key} must not be empty")
        if len(text) > MAX_TEXT:
            raise ArgumentError(f"{key} is longer than {MAX_TEXT} characters")
        text = clean(key, text)
        if "enum" in spec and text not in spec["enum"]:
            raise ArgumentError(f"{key} must be one of {', '.join(spec['enum'])}, got {value!r}")
        out[key] = text
    return out


def parse_time(value: str, now: datetime, key: str) -> datetime:
    """ISO-8601 (naive = UTC), "now", or a duration before now."""
    if value.lower() == "now":
        return now
    relative = _RELATIVE.match(value.strip().lower())
    if relative:
        return now - timedelta(seconds=int(relative.group(1)) * _UNIT_SECONDS[relative.group(2)])
    clock = _CLOCK.match(value.strip())
    if clock:
        moment = now.replace(hour=int(clock.group(1)), minute=int(clock.group(2)), second=0, microsecond=0)
        return moment if moment <= now else moment - timedelta(days=1)
    day = _DAY.match(value.strip().lower())
    if day:
        hours, minutes = int(day.group(2) or 0), int(day.group(3) or 0)
        return _day(now, day.group(1)) + timedelta(hours=hours, minutes=minutes)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ArgumentError(f"{key} must be {TIME_DOC}, got {value!r}") from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _day(now: datetime, name: str) -> datetime:
    """00:00 UTC of the day `name` names from now's day."""
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if name == "today":
        return today
    if name == "yesterday":
        return today - timedelta(days=1)
    back = (today.weekday() - _WEEKDAYS.index(name)) % 7 or 7
    return today - timedelta(days=back)


def window(args: Mapping[str, Any], now: datetime) -> TimeWindow:
    since = parse_time(args["since"], now, "since") if "since" in args else None
    until = parse_time(args["until"], now, "until") if "until" in args else None
    clock = _CLOCK.match(str(args.get("until", "")).strip())
    if since is not None and clock:
        until = since.replace(hour=int(clock.group(1)), minute=int(clock.group(2)), second=0, microsecond=0)
        until += timedelta(days=1) if until <= since else timedelta()
    if since is not None and until is not None and since > until:
        raise ArgumentError("since is after until")
    return TimeWindow(since, until)
