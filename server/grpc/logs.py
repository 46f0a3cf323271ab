"""Structured logs: one JSON object per line per event, with session_id and rpc when known."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, ClassVar

_STANDARD = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}

# The RPC a task serves ({"rpc": ..., "session_id": ...}); tasks the pipeline starts inherit it, so
# every line logged while serving a call names the call.
call_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "call_context", default=None
)


class CallContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        context = call_context.get()
        if context:
            for key, value in context.items():
                if value and not hasattr(record, key):
                    setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    _order: ClassVar[tuple[str, ...]] = ("ts", "level", "logger", "event")

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


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
