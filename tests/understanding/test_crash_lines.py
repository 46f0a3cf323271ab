"""A crash shows in the crashing process's own log as its last words (Node's "exiting", Go's panic, a
segfault, a core dump), not as the word "restart": a question about a crash or a restart looks
for both, and a graceful stop is neither."""

from __future__ import annotations

import re

import pytest

from evigate.server.understanding.entities import extract

QUESTIONS = ("notify-dispatcher 今天有进程崩溃退出吗？", "Did notify-dispatcher crash today?")


def _pattern(question: str = QUESTIONS[0]) -> re.Pattern[str]:
    (term,) = extract(question, ["notify-dispatcher"]).log_terms
    assert term.pattern is not None
    return re.compile(term.pattern)


@pytest.mark.parametrize(
    "line",
    [
        '{"level":60,"msg":"unhandled rejection, exiting","err":{"message":"read ECONNRESET"}}',
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "Segmentation fault (core dumped)",
        "worker exited with code 137",
        "Back-off restarting failed container",
    ],
)
def test_a_crash_question_finds_the_process_last_words(line: str) -> None:
    assert _pattern().search(line)


@pytest.mark.parametrize("line", ["Shutting down gracefully", "request finished in 12 ms"])
def test_a_graceful_stop_is_no_crash(line: str) -> None:
    assert not _pattern().search(line)


def test_crash_in_either_language_is_the_same_term() -> None:
    assert _pattern(QUESTIONS[0]).pattern == _pattern(QUESTIONS[1]).pattern
