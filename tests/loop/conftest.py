"""The loop tests drive real server processes, like the reliability tests."""

from tests.reliability.conftest import any_url, mariadb_url, servers, sqlite_url

__all__ = ["any_url", "mariadb_url", "servers", "sqlite_url"]
