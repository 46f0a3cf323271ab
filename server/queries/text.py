"""Tokens for lexical search: ASCII words plus Chinese character bigrams."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
_STOP_TEXT = (
    "a an the is are was were be been to of in on at for and or with how what why when where which who "
    "does do did any there have has had i my me we our you your it its this that these those please show "
    "find get give tell now current currently can could should would will not no yes if then than so as by "
    "from about into service services"
)
_STOP_WORDS = frozenset(_STOP_TEXT.split())
# Particles and question words split Chinese runs; bigrams never straddle them.
_STOP_CHARS = frozenset(
    "的了吗呢吧啊么是在和与及或请帮我你们这那个有没怎样什如何哪些呀嘛很都也就还会要能把被让给对从到"
)


def tokenize(text: str) -> list[str]:
    out: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if run.isascii():
            if run not in _STOP_WORDS and (len(run) > 1 or run.isdigit()):
                out.append(run)
            continue
        piece = ""
        for char in run + " ":
            if char in _STOP_CHARS or char == " ":
                if len(piece) == 1:
                    out.append(piece)
                out.extend(piece[i : i + 2] for i in range(len(piece) - 1))
                piece = ""
            else:
                piece += char
    return out


# Identifiers in a case's text that work as exact (L0) keys: they name one fault.
_CASE_KEYS = re.compile(
    r"\b(?:[a-z]+\.)+[A-Z]\w*(?:Exception|Error)\b"  # java.sql.SQLTransientConnectionException
    r"|\b(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z][A-Za-z0-9]*[A-Z])[A-Za-z][A-Za-z0-9]{3,}\b"  # HighCPUUsage
    r"|\b[A-Za-z]+Pool-\d+\b"  # HikariPool-1
    r"|\b[A-Z]{2,}[-_]\d{2,}\b|\bHTTP \d{3}\b"  # ORA-00060, HTTP 502
    r"|\bdiagnose-[a-z][a-z-]*[a-z]\b"  # skill names
)


def case_keys(text: str) -> tuple[str, ...]:
    """A case's exact key terms: alert names, exception classes, error codes, pool and skill names."""
    return tuple(dict.fromkeys(m.group(0) for m in _CASE_KEYS.finditer(text)))
