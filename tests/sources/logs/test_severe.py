"""Which lines are rare severe events, whatever their level: the out-of-memory family is one kind
however each program words it."""

from __future__ import annotations

import pytest

from evigate.server.sources.logs import severe


@pytest.mark.parametrize(
    ("message", "level", "kind"),
    [
        ("java.lang.OutOfMemoryError: Java heap space", "ERROR", "out of memory"),
        ("OOM command not allowed when used memory > 'maxmemory'.", "ERROR", "out of memory"),  # Redis
        ("Can't save in background: fork: Cannot allocate memory", "WARN", "out of memory"),  # ENOMEM
        ("mmap failed: ENOMEM", "WARN", "out of memory"),
        ("Out of memory: Killed process 4321 (java) total-vm:8123456kB", "ERROR", "out of memory"),  # kernel
        (
            "java invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0",
            "WARN",
            "out of memory",
        ),
        ("Container worker was OOMKilled (exit code 137)", "INFO", "out of memory"),
        ("fatal error: runtime: out of memory", "FATAL", "out of memory"),
        ("connection refused", "FATAL", "fatal"),
        ("memory usage 512MB of 2GB", "INFO", None),
        ("booked a room for 2 nights", "INFO", None),
    ],
)
def test_the_kind_that_makes_a_line_severe(message: str, level: str, kind: str | None) -> None:
    assert severe.kind(message, level) == kind


@pytest.mark.parametrize(
    "message",
    [
        "OOM command not allowed when used memory > 'maxmemory'.",
        "Can't save in background: fork: Cannot allocate memory",
        "java invoked oom-killer: gfp_mask=0x100cca",
        "Memory cgroup out of memory: Killed process 4321 (java)",
    ],
)
def test_every_out_of_memory_line_holds_a_keyword_the_byte_search_looks_for(message: str) -> None:
    """Lines below the asked level are found by their words first: a kind no keyword finds is lost."""
    assert any(word in message.lower() for word in severe.KEYWORDS)
