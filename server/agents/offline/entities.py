"""Entities of a narrow operations question, in Chinese or English, by table lookup and patterns.

The offline agents query exactly what the question names: the services, alert names, log terms,
level and time window found here become the tool arguments, nothing looser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

KNOWN_SERVICES: tuple[str, ...] = (
    "payment-service",
    "order-service",
    "inventory-service",
    "user-service",
    "gateway",
)

# Chinese names of the demo world's services.
SERVICE_ALIASES: dict[str, str] = {
    "支付服务": "payment-service",
    "订单服务": "order-service",
    "库存服务": "inventory-service",
    "用户服务": "user-service",
    "网关": "gateway",
}

KNOWN_ALERTS: tuple[str, ...] = (
    "HighCPUUsage",
    "HighMemoryUsage",
    "HighErrorRate",
    "HighLatency",
    "PodRestartsHigh",
    "MySQLConnectionsHigh",
    "DiskSpaceLow",
    "ServiceDown",
)

# Phrases that name a known alert without its CamelCase name (matched lowercase, spaces removed).
ALERT_SYNONYMS: tuple[tuple[str, str], ...] = (
    ("cpu使用率", "HighCPUUsage"),
    ("cpu告警", "HighCPUUsage"),
    ("cpu过高", "HighCPUUsage"),
    ("highcpu", "HighCPUUsage"),
    ("内存使用率", "HighMemoryUsage"),
    ("内存告警", "HighMemoryUsage"),
    ("highmemory", "HighMemoryUsage"),
    ("错误率", "HighErrorRate"),
    ("errorrate", "HighErrorRate"),
    ("延迟告警", "HighLatency"),
    ("highlatency", "HighLatency"),
    ("pod重启", "PodRestartsHigh"),
    ("重启告警", "PodRestartsHigh"),
    ("podrestarts", "PodRestartsHigh"),
)


@dataclass(frozen=True)
class LogTerm:
    """A log vocabulary entry: searched with an exact `keyword` or, for a concept, a regex `pattern`."""

    name: str  # canonical English name, e.g. "HikariCP"
    keyword: str | None
    pattern: str | None
    label_zh: str
    label_en: str

    def arguments(self) -> dict[str, str]:
        return {"keyword": self.keyword} if self.keyword is not None else {"pattern": self.pattern or ""}


@dataclass(frozen=True)
class _TermEntry:
    triggers: tuple[str, ...]  # lowercase substrings of the question
    term: LogTerm


# Chinese → English log vocabulary. A concept such as pool exhaustion is searched by a pattern that
# covers the ways the library logs it (HikariCP's logger prints "HikariPool-1 - Connection is not available").
LOG_TERMS: tuple[_TermEntry, ...] = (
    _TermEntry(
        ("hikaricp", "hikari", "连接池耗尽", "连接池", "connection pool", "pool exhaustion"),
        LogTerm(
            "HikariCP",
            None,
            "HikariCP|HikariPool|Connection is not available",
            "HikariCP 连接池耗尽",
            "HikariCP connection pool exhaustion",
        ),
    ),
    _TermEntry(
        ("outofmemoryerror", "内存溢出", "oom", "out of memory"),
        LogTerm(
            "OutOfMemoryError", "OutOfMemoryError", None, "OutOfMemoryError 内存溢出", "OutOfMemoryError"
        ),
    ),
    _TermEntry(
        ("nullpointerexception", "空指针"),
        LogTerm(
            "NullPointerException",
            "NullPointerException",
            None,
            "NullPointerException 空指针",
            "NullPointerException",
        ),
    ),
    _TermEntry(
        ("超时", "timeout", "timed out", "time out"),
        LogTerm("timeout", None, "(?i)timeout|timed out", "超时", "timeout"),
    ),
    _TermEntry(
        ("死锁", "deadlock"),
        LogTerm("deadlock", None, "(?i)deadlock", "死锁", "deadlock"),
    ),
    _TermEntry(
        ("连接被拒绝", "connection refused"),
        LogTerm("Connection refused", None, "(?i)connection refused", "连接被拒绝", "connection refused"),
    ),
    _TermEntry(
        ("慢查询", "slow query"),
        LogTerm("slow query", None, "(?i)slow query", "慢查询", "slow query"),
    ),
)

_ASCII_LEFT = r"(?<![A-Za-z0-9_-])"
_ASCII_RIGHT = r"(?![A-Za-z0-9_-])"
_SERVICE_RE = re.compile(
    _ASCII_LEFT + r"([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-(?:service|gateway)|gateway)" + _ASCII_RIGHT
)
_POOL_RE = re.compile(_ASCII_LEFT + r"(HikariPool-\d+)" + _ASCII_RIGHT)
_EXCEPTION_RE = re.compile(
    _ASCII_LEFT + r"((?:[a-z]+\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error))" + _ASCII_RIGHT
)
_CAMEL_RE = re.compile(_ASCII_LEFT + r"([A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]*)+)" + _ASCII_RIGHT)
# HTTP error statuses named in a question ("502 错误", "any 503s"), not durations or percentages.
_STATUS_RE = re.compile(r"(?<![0-9.=%])([45]\d{2})(?![0-9.%]|\s*(?:ms|s\b|m\b|分钟|秒|次))")
_QUOTED_RE = re.compile(r"[\"“「'‘]([^\"”」'’]{3,80})[\"”」'’]")

_CN_DIGITS = {
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
    "半": 0,
}
_ZH_WINDOW = re.compile(r"(?:最近|过去|近)\s*(\d+|[一两二三四五六七八九十半]+)?\s*(?:个)?\s*(分钟|小时|天)")
_EN_WINDOW = re.compile(
    r"\b(?:last|past|previous|within the last|in the last)\s+(\d+|an|a|one|two|three)?\s*"
    r"(minutes?|mins?|m|hours?|hrs?|h|days?|d)\b",
    re.IGNORECASE,
)
_UNIT_MINUTES = {"分钟": 1, "小时": 60, "天": 1440}

_CURRENT_MARKERS = (
    "现在",
    "当前",
    "目前",
    "正在",
    "此刻",
    "right now",
    "currently",
    "current",
    "now",
    "firing",
)
_RESOLVED_MARKERS = ("已恢复", "已解决", "resolved")
_ALERT_MARKERS = ("告警", "报警", "警报", "alert", "alarm", "firing")
_LOG_MARKERS = ("日志", "报错", "异常", "log", "exception", "stack trace", "堆栈")
_GUIDANCE_MARKERS = (
    "怎么办",
    "怎么处理",
    "如何处理",
    "如何排查",
    "怎么排查",
    "排查步骤",
    "处理建议",
    "处理步骤",
    "runbook",
    "手册",
    "知识库",
    "how to",
    "how do i",
    "how should",
    "what should",
    "guidance",
    "steps to",
    "playbook",
)
_ERROR_MARKERS = ("错误日志", "error日志", "error log", "errors", "error-level", "error level", "报错")
_WARN_MARKERS = ("警告日志", "warn日志", "warning", "warn log", "warn-level", "warn level")


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
