"""Entities of a narrow operations question, in Chinese or English, by table lookup and patterns.

The offline agents query exactly what the question names: the services, alert names, log terms,
level and time window found here become the tool arguments, nothing looser. A log question's subject
that the vocabulary does not map ("Full GC", "用户登录失败") is a log term too: its own words, as an
exact keyword or a precise pattern, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from evigate.server.agents.offline.subjects import (
    _with_subjects,
)
from evigate.server.agents.offline.vocabulary import (
    _ALERT_MARKERS,
    _ASCII_LEFT,
    _ASCII_RIGHT,
    _CAMEL_RE,
    _CN_DIGITS,
    _CURRENT_MARKERS,
    _EN_WINDOW,
    _ERROR_MARKERS,
    _EXCEPTION_RE,
    _GUIDANCE_MARKERS,
    _LOG_MARKERS,
    _POOL_RE,
    _QUOTED_RE,
    _RESOLVED_MARKERS,
    _SERVICE_RE,
    _STATUS_RE,
    _UNIT_MINUTES,
    _WARN_MARKERS,
    _ZH_WINDOW,
    ALERT_SYNONYMS,
    KNOWN_ALERTS,
    KNOWN_SERVICES,
    LOG_TERMS,
    SERVICE_ALIASES,
    LogTerm,
)


@dataclass(frozen=True)
class Entities:
    """What a question names. `intents` is ordered: "alert", "log", "knowledge"."""

    services: tuple[str, ...]
    alert_names: tuple[str, ...]
    log_terms: tuple[LogTerm, ...]
    level: str | None  # "ERROR" | "WARN"
    window_minutes: int | None
    current: bool  # "now" / "当前": the alert must be firing
    resolved: bool
    intents: tuple[str, ...]

    @property
    def intent(self) -> str:
        return self.intents[0] if self.intents else "unknown"

    @property
    def wants_guidance(self) -> bool:
        return "knowledge" in self.intents

    @property
    def alert_state(self) -> str | None:
        if self.resolved:
            return "resolved"
        return "firing" if self.current else None


def _contains_any(text: str, markers: Iterable[str]) -> bool:
    return any(_has_marker(text, marker) for marker in markers)


def _has_marker(text: str, marker: str) -> bool:
    # ASCII markers are whole words (so "now" is not found in "known"); Chinese ones are substrings.
    if marker.isascii():
        return re.search(r"(?<![a-z])" + re.escape(marker) + r"(?![a-z])", text) is not None
    return marker in text


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _services(question: str, lowered: str, known: Iterable[str]) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for name in known:
        for match in re.finditer(_ASCII_LEFT + re.escape(name.lower()) + _ASCII_RIGHT, lowered):
            found.append((match.start(), name))
    for alias, name in SERVICE_ALIASES.items():
        position = question.find(alias)
        if position >= 0:
            found.append((position, name))
    for match in _SERVICE_RE.finditer(question):
        found.append((match.start(), match.group(1).lower()))
    ordered = _unique(name for _, name in sorted(found))
    # "gateway" alone is dropped when a more specific "*-gateway" was named.
    if "gateway" in ordered and any(name.endswith("-gateway") for name in ordered):
        ordered = tuple(name for name in ordered if name != "gateway")
    return ordered


def _log_terms(question: str, lowered: str) -> tuple[LogTerm, ...]:
    terms: list[LogTerm] = []
    literal_names: set[str] = set()
    for match in _POOL_RE.finditer(question):
        name = match.group(1)
        literal_names.add(name)
        terms.append(LogTerm(name, name, None, name, name))
    for match in _EXCEPTION_RE.finditer(question):
        name = match.group(1)
        if name not in literal_names:
            literal_names.add(name)
            terms.append(LogTerm(name, name, None, name, name))
    for match in _STATUS_RE.finditer(question):
        code = match.group(1)
        if code not in literal_names:
            literal_names.add(code)
            # A bare number is searched as a whole number, so 502 does not match 5020ms.
            terms.append(LogTerm(code, None, rf"(?<![0-9]){code}(?![0-9])", f"HTTP {code}", f"HTTP {code}"))
    for match in _QUOTED_RE.finditer(question):
        text = match.group(1).strip()
        if text and text not in literal_names:
            literal_names.add(text)
            terms.append(LogTerm(text, text, None, text, text))
    compact = lowered.replace(" ", "")
    for entry in LOG_TERMS:
        if entry.term.name in literal_names:
            continue
        hit = any(
            (trigger in lowered) or (not trigger.isascii() and trigger in compact)
            for trigger in entry.triggers
        )
        if entry.term.name == "HikariCP" and any(name.startswith("HikariPool-") for name in literal_names):
            continue  # the exact pool name is narrower than the concept
        if hit:
            terms.append(entry.term)
    return tuple(terms)


def _alert_names(question: str, lowered: str, log_terms: tuple[LogTerm, ...]) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    term_names = {term.name.lower() for term in log_terms} | {"hikaricp", "hikaripool"}
    known = {name.lower(): name for name in KNOWN_ALERTS}
    for match in _CAMEL_RE.finditer(question):
        word = match.group(1)
        if word.lower() in term_names or word.endswith(("Exception", "Error")):
            continue
        found.append((match.start(), known.get(word.lower(), word)))
    for lower_name, name in known.items():
        whole = re.search(r"(?<![a-z0-9])" + lower_name + r"(?![a-z0-9])", lowered)
        if whole is not None:
            found.append((whole.start(), name))
    compact = lowered.replace(" ", "")
    for phrase, name in ALERT_SYNONYMS:
        position = compact.find(phrase)
        if position >= 0 and name not in {n for _, n in found}:
            found.append((len(question) + position, name))
    return _unique(name for _, name in sorted(found))


def _chinese_number(text: str) -> int:
    """一 → 1, 十 → 10, 十五 → 15, 三十 → 30, 二十四 → 24 (windows need no more)."""
    if "十" not in text:
        return _CN_DIGITS.get(text[-1], 1)
    tens_text, _, ones_text = text.partition("十")
    tens = _CN_DIGITS.get(tens_text[-1], 1) if tens_text else 1
    ones = _CN_DIGITS.get(ones_text[0], 0) if ones_text else 0
    return tens * 10 + ones


def _window_minutes(question: str) -> int | None:
    zh = _ZH_WINDOW.search(question)
    if zh is not None:
        amount_text = zh.group(1)
        if amount_text is None:
            amount = 1
        elif amount_text.isdigit():
            amount = int(amount_text)
        elif amount_text == "半":
            return _UNIT_MINUTES[zh.group(2)] // 2
        else:
            amount = _chinese_number(amount_text)
        return amount * _UNIT_MINUTES[zh.group(2)]
    en = _EN_WINDOW.search(question)
    if en is not None:
        amount_text = (en.group(1) or "1").lower()
        words = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}
        amount = int(amount_text) if amount_text.isdigit() else words.get(amount_text, 1)
        unit = en.group(2).lower()
        per = 1440 if unit.startswith("d") else 60 if unit.startswith("h") else 1
        return amount * per
    return None


def _level(lowered: str) -> str | None:
    if re.search(r"(?<![a-z])error(?![a-z])", lowered) and "errorrate" not in lowered.replace(" ", ""):
        return "ERROR"
    if _contains_any(lowered, _ERROR_MARKERS) or "错误" in lowered.replace("错误率", ""):
        return "ERROR"
    if (
        _contains_any(lowered, _WARN_MARKERS)
        or re.search(r"(?<![a-z])warn(?![a-z])", lowered)
        or "警告" in lowered
    ):
        return "WARN"
    return None


def extract(question: str, known_services: Iterable[str] = KNOWN_SERVICES) -> Entities:
    """The entities of `question`. Pure and deterministic."""
    lowered = question.lower()
    services = _services(question, lowered, known_services)
    log_terms = _log_terms(question, lowered)
    alert_names = _alert_names(question, lowered, log_terms)
    window = _window_minutes(question)
    current = _contains_any(lowered, _CURRENT_MARKERS)
    resolved = _contains_any(lowered, _RESOLVED_MARKERS)
    level = _level(lowered)

    intents: list[str] = []
    if alert_names or _contains_any(lowered, _ALERT_MARKERS):
        intents.append("alert")
    if log_terms or _contains_any(lowered, _LOG_MARKERS) or (level is not None and "alert" not in intents):
        intents.append("log")
    if _contains_any(lowered, _GUIDANCE_MARKERS):
        intents.append("knowledge")
    if "knowledge" in intents and not services:
        # "How do I handle HikariCP pool exhaustion?" asks for guidance, not for a scan of every service.
        intents = ["knowledge"]
    if "log" not in intents:
        level = None  # a level only narrows log queries
    elif len(lowered) == len(question):
        log_terms = _with_subjects(question, lowered, known_services, log_terms)
    return Entities(
        services=services,
        alert_names=alert_names,
        log_terms=log_terms,
        level=level,
        window_minutes=window,
        current=current,
        resolved=resolved,
        intents=tuple(intents),
    )
