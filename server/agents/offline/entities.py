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

    def matches(self, text: str) -> bool:
        """Whether `text` holds this term as the log tool searches it (keyword: case-insensitive
        substring; pattern: regular expression)."""
        if self.keyword is not None:
            return self.keyword.casefold() in text.casefold()
        if not self.pattern:
            return False
        try:
            return re.search(self.pattern, text) is not None
        except re.error:
            return False


@dataclass(frozen=True)
class _TermEntry:
    triggers: tuple[str, ...]  # lowercase substrings of the question
    term: LogTerm
    # Words that only describe the concept ("pool", "exhaustion"): next to a trigger they add no
    # subject of their own, so "HikariCP pool-exhaustion logs" is still the HikariCP concept.
    descriptors: tuple[str, ...] = ()


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
        ("pool", "pools", "exhaustion", "exhausted", "connection", "connections", "耗尽", "满了", "打满"),
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
_LOG_MARKERS = ("日志", "报错", "异常", "log", "logs", "logged", "exception", "stack trace", "堆栈")
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


# --- the subject of a log question that the vocabulary does not map ---------------------------------
#
# "Are there ERROR logs mentioning Full GC on payment-service?" names a subject ("Full GC") that no
# vocabulary entry maps. Whatever is left of a log question once its service, level, window, alert
# names, mapped terms and function words are taken away is its subject, and it becomes an exact
# term of the query: a narrow question is never answered from a query that lacks its subject.

# English function words and the words the other entities already stand for (levels, "logs").
_EN_STOP_WORDS = """
    a an the any some all are is was were be been being am do does did done have has had having
    there here it its this that these those what which who whom whose when where why how many much
    i me my we our you your they them their he she his her please can could would should will shall
    whether if may might must show find search see seen list get got give tell check look looking
    log logs logged logging logger entry entries line lines message messages record records
    event events output outputs print printed trace traces stack stacktrace
    error errors warn warns warning warnings info debug level levels fatal severity
    exception exceptions alert alerts alarm alarms firing fired resolved
    mention mentions mentioning mentioned contain contains containing contained include includes
    including with without about regarding related like such as of on in at by for from to into
    onto within during since until after before between over under and or but nor not no also too
    either neither both yet still ever now right currently current recent recently lately today
    yesterday last past previous latest hour hours minute minutes min mins day days week weeks
    time times happen happens happened happening occur occurs occurred occurring appear appears
    appeared there's any there're service services issue issues problem problems anything
    something thing things kind sort type types
"""
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
# Chinese phrases that separate the words of a question (never part of a subject).
_ZH_SEPARATORS = tuple(
    sorted(
        (
            "有没有",
            "是否有",
            "是否",
            "有无",
            "是不是",
            "日志",
            "记录",
            "报错",
            "错误",
            "警告",
            "异常",
            "告警",
            "报警",
            "警报",
            "堆栈",
            "级别",
            "相关",
            "的",
            "吗",
            "呢",
            "吧",
            "以及",
            "或者",
            "同时",
            "并且",
            "还有",
            "现在",
            "当前",
            "目前",
            "正在",
            "此刻",
            "最近",
            "过去",
            "今天",
            "昨天",
            "出现过",
            "出现",
            "打印",
            "看看",
            "看一下",
            "查一下",
            "查查",
            "查询",
            "查看",
            "帮我",
            "请问",
            "一下",
            "什么",
            "哪些",
            "多少",
            "怎么",
            "如何",
            "为什么",
            "里面",
            "关于",
            "包含",
            "提到",
            "涉及",
            "类似",
            "这种",
            "那种",
            "这个",
            "那个",
            "这些",
            "那些",
            "情况",
            "信息",
            "内容",
            "问题",
            "原因",
            "办法",
            "建议",
            "步骤",
        ),
        key=len,
        reverse=True,
    )
)
# Trimmed from either end of a Chinese run ("有用户登录失败" → "用户登录失败").
_ZH_EDGE = (
    *("处理", "排查", "解决", "发生", "存在", "服务", "报"),
    *("有", "了", "过", "么", "和", "与", "及", "或", "在", "中", "里", "上", "下", "请", "还", "都"),
)
_PUNCT = re.compile(r"[^\w\s\u3400-\u9fff-]|_")
_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*|[\u3400-\u9fff]+")
# HTTP reason phrases next to a status code describe it ("502 Bad Gateway").
_STATUS_WORDS = (
    "bad gateway",
    "service unavailable",
    "gateway timeout",
    "internal server error",
    "too many requests",
    "not found",
    "http",
    "status",
    "状态码",
)
_EN_SUFFIXES = ("ures", "ure", "ings", "ing", "ied", "ies", "ed", "es", "s")


def _flexible(phrase: str) -> str:
    """A regex for `phrase` that also finds it written with other spacing or hyphens."""
    parts = phrase.split() if phrase.isascii() else list(phrase.replace(" ", ""))
    joiner = r"[\s_-]*" if phrase.isascii() else r"\s*"
    return joiner.join(re.escape(part) for part in parts)


def _stem(word: str) -> str:
    lowered = word.lower()
    if not lowered.isalpha() or len(lowered) < 5 or lowered.endswith(("ss", "us", "is")):
        return lowered
    for suffix in _EN_SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) - len(suffix) >= 3:
            return lowered[: -len(suffix)]
    return lowered


def _subject_term(words: list[str]) -> LogTerm:
    """The exact term for a subject: its words as a keyword, or a precise pattern when an English
    word is inflected ("probe failures" also finds "probe failed")."""
    text = " ".join(words)
    stems = [_stem(word) if word.isascii() else word for word in words]
    if all(stem == word.lower() for stem, word in zip(stems, words, strict=True)):
        return LogTerm(text, text, None, text, text)
    parts: list[str] = []
    for stem, word in zip(stems, words, strict=True):
        if parts:
            parts.append(r"[\s_-]+" if word.isascii() else r"\s*")
        parts.append(re.escape(stem) + ("[a-z]*" if stem != word.lower() else ""))
    left = r"(?<![a-z0-9])" if words[0].isascii() else ""
    return LogTerm(text, None, "(?i)" + left + "".join(parts), text, text)


# Per character of the question: free (a subject's candidate), covered (a mapped term: joins a
# subject but is not one) or a break (separates subjects: services, alerts, windows, function words).
_FREE, _COVERED, _BREAK = 0, 1, 2


def _mark(mask: list[int], start: int, end: int, value: int) -> None:
    """Classifies the still-free characters of [start, end)."""
    for i in range(start, end):
        if mask[i] == _FREE:
            mask[i] = value


def _subjects(
    question: str, lowered: str, known: Iterable[str], log_terms: tuple[LogTerm, ...]
) -> tuple[list[LogTerm], list[tuple[int, int]], list[tuple[int, int]]]:
    """(subject terms, subject spans, literal spans) of a log question."""
    mask = [_FREE] * len(question)
    literal_spans: list[tuple[int, int]] = []
    # Covered: what the vocabulary or a literal term already maps.
    for regex in (_POOL_RE, _EXCEPTION_RE, _STATUS_RE, _QUOTED_RE):
        for match in regex.finditer(question):
            literal_spans.append(match.span())
            _mark(mask, *match.span(), _COVERED)
    phrases = [trigger for entry in LOG_TERMS for trigger in (*entry.triggers, *entry.descriptors)]
    if any(term.name.isdigit() for term in log_terms):
        phrases.extend(_STATUS_WORDS)
    for phrase in phrases:
        for match in re.finditer(_flexible(phrase), lowered):
            _mark(mask, *match.span(), _COVERED)
    for term in log_terms:
        for match in re.finditer(re.escape(term.name.lower()), lowered):
            _mark(mask, *match.span(), _COVERED)
    # Breaks: services, alert names, windows, punctuation, function words.
    spans: list[tuple[int, int]] = []
    for name in known:
        spans.extend(
            m.span() for m in re.finditer(_ASCII_LEFT + re.escape(name.lower()) + _ASCII_RIGHT, lowered)
        )
    for alias in SERVICE_ALIASES:
        spans.extend(m.span() for m in re.finditer(re.escape(alias), question))
    spans.extend(m.span(1) for m in _SERVICE_RE.finditer(question))
    spans.extend(m.span(1) for m in _CAMEL_RE.finditer(question))
    for name in KNOWN_ALERTS:
        spans.extend(m.span() for m in re.finditer(re.escape(name.lower()), lowered))
    for phrase, _ in ALERT_SYNONYMS:
        spans.extend(m.span() for m in re.finditer(_flexible(phrase), lowered))
    spans.extend(m.span() for m in (*_ZH_WINDOW.finditer(question), *_EN_WINDOW.finditer(question)))
    spans.extend(m.span() for m in _PUNCT.finditer(question))
    for start, end in spans:
        _mark(mask, start, end, _BREAK)
    for match in _WORD.finditer(question):
        word = match.group(0)
        if word.isascii():
            if len(word) == 1 or word.lower() in _EN_STOP:
                _mark(mask, *match.span(), _BREAK)
            continue
        for phrase in _ZH_SEPARATORS:
            for found in re.finditer(re.escape(phrase), word):
                start, end = match.start() + found.start(), match.start() + found.end()
                if all(mask[i] == _FREE for i in range(start, end)):
                    _mark(mask, start, end, _BREAK)
    _trim_chinese_edges(question, mask)

    subjects: list[LogTerm] = []
    subject_spans: list[tuple[int, int]] = []
    start = 0
    while start < len(question):
        if mask[start] == _BREAK or question[start].isspace():
            start += 1
            continue
        end = start
        while end < len(question) and mask[end] != _BREAK:
            end += 1
        words = [m.group(0) for m in _WORD.finditer(question, start, end)]
        content = [i for i in range(start, end) if mask[i] == _FREE and _WORD.match(question[i])]
        uncovered_ascii = any(
            sum(1 for i in range(m.start(), m.end()) if mask[i] == _FREE) >= 2
            for m in _WORD.finditer(question, start, end)
            if m.group(0).isascii()
        )
        uncovered_cjk = sum(1 for i in content if not question[i].isascii())
        if words and (uncovered_ascii or uncovered_cjk >= 2):
            subjects.append(_subject_term(words))
            subject_spans.append((start, end))
        start = end
    return subjects, subject_spans, literal_spans


def _trim_chinese_edges(question: str, mask: list[int]) -> None:
    """Breaks the filler characters at both ends of each free run of Chinese characters."""
    i = 0
    while i < len(question):
        if mask[i] == _BREAK or question[i].isascii():
            i += 1
            continue
        j = i
        while j < len(question) and mask[j] != _BREAK and not question[j].isascii():
            j += 1
        start, end = i, j
        trimmed = True
        while trimmed:
            trimmed = False
            for edge in _ZH_EDGE:
                size = len(edge)
                if (
                    end - start >= size
                    and question.startswith(edge, start)
                    and all(mask[k] == _FREE for k in range(start, start + size))
                ):
                    _mark(mask, start, start + size, _BREAK)
                    start, trimmed = start + size, True
                if (
                    end - start >= size
                    and question.startswith(edge, end - size)
                    and all(mask[k] == _FREE for k in range(end - size, end))
                ):
                    _mark(mask, end - size, end, _BREAK)
                    end, trimmed = end - size, True
        i = j


def _inside(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(start <= span[0] and span[1] <= end for start, end in spans)


def _with_subjects(
    question: str, lowered: str, known: Iterable[str], log_terms: tuple[LogTerm, ...]
) -> tuple[LogTerm, ...]:
    """The log terms of a log question with its unmapped subjects first. A vocabulary concept found
    only inside a subject or a literal ("超时" in "支付回调处理超时", "timed out" in a quoted line)
    is that narrower term's part, not a term of its own."""
    subjects, subject_spans, literal_spans = _subjects(question, lowered, known, log_terms)
    inner = [*subject_spans, *literal_spans]
    kept: list[LogTerm] = []
    for term in log_terms:
        entry = next((e for e in LOG_TERMS if e.term == term), None)
        if entry is not None:
            found = [m.span() for trigger in entry.triggers for m in re.finditer(_flexible(trigger), lowered)]
            if found and all(_inside(span, inner) for span in found):
                continue
        elif any(
            _inside(m.span(), subject_spans) for m in re.finditer(re.escape(term.name.lower()), lowered)
        ):
            continue
        kept.append(term)
    # Literal terms (exception classes, pool names, status codes, quoted text) are the most exact,
    # then the subjects, then the vocabulary's concepts.
    concepts = {entry.term for entry in LOG_TERMS}
    literals = [term for term in kept if term not in concepts]
    names = {term.name.lower() for term in kept}
    fresh = [subject for subject in subjects if subject.name.lower() not in names]
    return (*literals, *fresh, *(term for term in kept if term in concepts))


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
