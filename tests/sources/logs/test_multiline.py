"""Stack traces: which lines continue an event, and the exception chain they spell."""

from __future__ import annotations

import pytest

from evigate.server.sources.logs.multiline import Continuations, exception_chain

JAVA = """\
org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection
\tat org.springframework.jdbc.datasource.DataSourceUtils.getConnection(DataSourceUtils.java:84)
Caused by: java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request \
timed out after 30000ms.
\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:696)
\t... 42 common frames omitted
\tSuppressed: java.lang.IllegalStateException: pool closed
\t\tat com.zaxxer.hikari.pool.HikariPool.close(HikariPool.java:1)
Caused by: java.net.SocketTimeoutException: connect timed out
\t... 12 more"""

PYTHON = """Traceback (most recent call last):
  File "/app/export.py", line 41, in export
    row = rates[currency]
KeyError: 'CNY'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/worker.py", line 88, in run
    export(batch)
billing.errors.ExportTimeout: no rate for CNY"""


@pytest.mark.parametrize(
    ("text", "chain"),
    [
        (
            JAVA,
            [
                "org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection",
                "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, "
                "request timed out after 30000ms.",
                "java.net.SocketTimeoutException: connect timed out",
            ],
        ),
        # Python prints the cause first; the chain lists the outermost first, like Java's.
        (PYTHON, ["billing.errors.ExportTimeout: no rate for CNY", "KeyError: 'CNY'"]),
        ("java.lang.NullPointerException\n\tat a.B.c(B.java:1)", ["java.lang.NullPointerException"]),
        ("\tat a.B.c(B.java:1)", []),
    ],
)
def test_exception_chain(text: str, chain: list[str]) -> None:
    assert [str(e) for e in exception_chain(text.split("\n"))] == chain


@pytest.mark.parametrize(("text", "name"), [(JAVA, "java"), (PYTHON, "python")])
def test_every_stack_line_continues_the_event(text: str, name: str) -> None:
    continuations = Continuations()
    lines = [line for line in text.split("\n") if line.strip()]  # the reader drops blank lines
    assert all(continuations.accepts(line) for line in lines), name


@pytest.mark.parametrize(
    "line",
    ["2026-07-08 23:05:28.123 INFO next event", "garbage a sidecar wrote", "", '{"level":"info"'],
)
def test_other_lines_do_not_continue(line: str) -> None:
    assert not Continuations().accepts(line)
