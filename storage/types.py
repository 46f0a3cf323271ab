"""Column types: the V008 MySQL types, with SQLite equivalents, shared by models and migrations."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, DateTime, Dialect, Double, Integer, Text, TypeDecorator
from sqlalchemy.dialects import mysql
from sqlalchemy.types import TypeEngine

_MYSQL = ("mysql", "mariadb")


def _on_mysql(generic: TypeEngine[Any], mysql_type: TypeEngine[Any]) -> TypeEngine[Any]:
    return generic.with_variant(mysql_type, *_MYSQL)


# BIGINT AUTO_INCREMENT on MySQL; SQLite only auto-increments an INTEGER PRIMARY KEY.
BigIntPk: TypeEngine[int] = BigInteger().with_variant(Integer(), "sqlite")
LongText: TypeEngine[str] = _on_mysql(Text(), mysql.LONGTEXT())
Json: TypeEngine[Any] = _on_mysql(JSON(), mysql.JSON())
Float64: TypeEngine[float] = Double()


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in Python, naive UTC in the column (DATETIME(6) on MySQL)."""

    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in _MYSQL:
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime())

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)
