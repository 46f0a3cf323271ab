"""Database URL helpers."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url


def default_sqlite_url(state_dir: Path) -> str:
    return f"sqlite+aiosqlite:///{(state_dir / 'evigate.db').resolve()}"


def normalize_url(url: str) -> str:
    """Force utf8mb4 on MySQL connections (Chinese text and emoji in logs)."""
    parsed = make_url(url)
    if parsed.get_backend_name() in ("mysql", "mariadb") and "charset" not in parsed.query:
        parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    return parsed.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def is_sqlite_memory(url: str) -> bool:
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")
