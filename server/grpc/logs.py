"""Structured logs: one JSON object per line per event, with session_id and rpc when known.

Fields come from `extra`: either as attributes of the record (`extra={"address": ...}`), or, cheaper
because the formatter need not scan the record's attributes, as one dict under the `fields` key
(`extra={"fields": {"rpc": ..., "code": ...}}`), which the per-call RPC line uses."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from typing import Any

_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}
FIELDS = "fields"  # the `extra` key whose dict holds a record's fields

# The RPC a task serves ({"rpc": ..., "session_id": ...}); tasks the pipeline starts inherit it, so
# every line logged while serving a call names the call.
call_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "call_context", default=None
)

_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
_LEVELS = {name: name.lower() for name in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")}


class CallContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        context = call_context.get()
        if context:
            fields = record.__dict__.get(FIELDS)
            if isinstance(fields, dict):
                for key, value in context.items():
                    if value and key not in fields:
                        fields[key] = value
            else:
                for key, value in context.items():
                    if value and not hasattr(record, key):
                        setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    """`ts` (UTC, milliseconds), `level`, `logger`, `event`, then the record's fields."""

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._second_text = ""

    def _timestamp(self, created: float) -> str:
        # The same text as datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds"),
        # with the part up to the second formatted once per second.
        second = int(created)
        micros = round((created - second) * 1e6)  # datetime rounds to microseconds, then truncates
        if micros >= 1_000_000:
            second, micros = second + 1, micros - 1_000_000
        if second != self._second:
            self._second_text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        return f"{self._second_text}.{micros // 1000:03d}+00:00"

    def line(self, created: float, levelname: str, logger: str, event: str, fields: dict[str, Any]) -> str:
        """The line of an event with these fields (what `format` writes for such a record)."""
        out: dict[str, Any] = {
            "ts": self._timestamp(created),
            "level": _LEVELS.get(levelname) or levelname.lower(),
            "logger": logger,
            "event": event,
        }
        out.update(fields)
        return _ENCODER.encode(out)

    def format(self, record: logging.LogRecord) -> str:
        attrs = record.__dict__
        fields = attrs.get(FIELDS)
        if not isinstance(fields, dict):
            fields = {k: v for k, v in attrs.items() if k not in _STANDARD and not k.startswith("_")}
        if record.exc_info:
            fields = {**fields, "exception": self.formatException(record.exc_info)}
        return self.line(record.created, record.levelname, record.name, record.getMessage(), fields)


def log_fields(logger: logging.Logger, level: int, event: str, fields: dict[str, Any]) -> None:
    """`logger.log(level, event, extra={FIELDS: fields})`, written straight to the one JSON handler
    that `configure` installs when that is where the line would go.

    The logging module's per-record work (LogRecord, caller lookup, filters, handler dispatch) costs
    several times what the line itself costs; for the line written on every RPC that is a real share
    of a short call. The output is the same line. Any other set-up (more handlers, other formatters or
    filters, a handler or logger of its own) takes the ordinary path."""
    if not logger.isEnabledFor(level):
        return
    handler = _sole_json_handler(logger, level)
    if handler is None:
        logger.log(level, event, extra={FIELDS: fields})
        return
    formatter: JsonFormatter = handler.formatter  # type: ignore[assignment]
    line = formatter.line(time.time(), logging.getLevelName(level), logger.name, event, fields)
    handler.acquire()
    try:
        handler.stream.write(line + handler.terminator)
        handler.flush()
    except Exception:  # as logging does: a failing log write never fails the call
        handler.handleError(logging.makeLogRecord({"msg": event}))
    finally:
        handler.release()


def _sole_json_handler(logger: logging.Logger, level: int) -> logging.StreamHandler[Any] | None:
    current: logging.Logger | None = logger
    while current is not None and current is not logging.root:
        if current.handlers or current.filters or not current.propagate:
            return None
        current = current.parent
    handlers = logging.root.handlers
    if len(handlers) != 1 or logging.root.filters:
        return None
    handler = handlers[0]
    if (
        type(handler) is not logging.StreamHandler
        or type(handler.formatter) is not JsonFormatter
        or level < handler.level
        or any(type(f) is not CallContextFilter for f in handler.filters)
    ):
        return None
    return handler


def configure(level: str = "INFO", fmt: str = "json") -> None:
    """Installs one stderr handler on the root logger (replacing earlier ones)."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handler.addFilter(CallContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # Third-party chatter (SQL echo, HTTP clients) stays out unless asked for.
    for noisy in ("sqlalchemy", "aiosqlite", "httpx", "openai", "asyncio"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
