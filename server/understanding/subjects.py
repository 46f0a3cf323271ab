"""The subject of a log question that the vocabulary does not map ("Full GC", "用户登录失败"): what is
left of the question once its service, level, window, alert names, mapped terms and function words
are taken away becomes an exact term of the query."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.server.sources.logs.layouts import service_of_pod
from evigate.server.understanding.clock import clock_spans
from evigate.server.understanding.symptoms import COMPONENT_WORDS, symptoms
from evigate.server.understanding.vocabulary import (
    _ASCII_LEFT,
    _ASCII_RIGHT,
    _CAMEL_RE,
    _EN_WINDOW,
    _ERRNO_RE,
    _EXCEPTION_RE,
    _K8S_REASON_RE,
    _POOL_RE,
    _QUOTED_RE,
    _SERVICE_RE,
    _STATUS_RE,
    _ZH_WINDOW,
    LOG_TERMS,
    LogTerm,
)

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
    stuck really very keep keeps kept again constantly frequently often lot lots bad badly severe
    serious high low big huge too
    pod pods deployment deployments statefulset statefulsets daemonset daemonsets replicaset
    replicasets workload workloads container containers namespace namespaces ns
    fetch fetched retrieve pull display dump read view give gimme summarize summarise summary
    troubleshoot investigate debug diagnose explain cause causes causing caused reason reasons
    use using only answer both each every different distinct app apps application applications
    loki datadog newrelic relic elasticsearch kibana splunk cloudwatch graylog papertrail stackdriver
"""
# A log store's name is where the logs were asked from, never what they say ("from New Relic").
_LOG_STORES = ("new relic", "google cloud logging")
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
# A day or a month the question dates its logs by ("since last Thursday", "last December", "June 12",
# "上周四", "从 6 月 12 日以来", "去年 12 月") is when, never what the logs say.
_DATES = re.compile(
    r"(?i)\b(?:(?:last|this|next|past)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:(?:last|this|next|past)\s+)?(?:january|february|march|april|june|july|august|september"
    r"|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?"
    r"|\b(?:last|this|past)\s+(?:week|month|year)\b|\b\d{4}-\d{2}-\d{2}\b"
    r"|(?:\d{1,4}\s*[年月日号]\s*)+|(?:上|下|这|本)?(?:个)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|上周|上个?月|去年|今年|本月|本周|这周"
)
# The name written beside the word "namespace" is a namespace, never a search term.
_NAMESPACE_NAME = (
    re.compile(r"(?i)\bnamespaces?\s+`?([\w.-]+)"),
    re.compile(r"(?i)(?<![\w-])([\w.-]+)`?\s*(?:namespaces?\b|命名空间|名字空间)"),
)
_POD_NAME = re.compile(r"(?<![\w.-])[a-z0-9]+(?:-[a-z0-9]+)*-[a-z0-9]+(?![\w-])")
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
            "命名空间",
            "名字空间",
            "哪些服务",
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
            "严重",
            "一直",
            "频繁",
            "经常",
            "总是",
            "很多",
            "太多",
            "突然",
            "是不是",
            "给我看",
            "给我",
            "获取",
            "拉取",
            "调取",
            "列出",
            "列举",
            "总结",
            "汇总",
            "概括",
            "排查",
            "调查",
            "诊断",
            "应用",
            "所有",
            "全部",
            "不同",
            "两个",
            "各个",
            "每个",
            "只根据",
            "回答",
            "导致",
            "造成",
            "以来",
            "容器",
        ),
        key=len,
        reverse=True,
    )
)
# Trimmed from either end of a Chinese run ("有用户登录失败" → "用户登录失败").
_ZH_EDGE = (
    *("处理", "排查", "解决", "发生", "存在", "服务", "报"),
    *("有", "了", "过", "么", "和", "与", "及", "或", "在", "中", "里", "上", "下", "请", "还", "都"),
    *("把", "从"),
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


def _break_spans(question: str, lowered: str, known: Iterable[str]) -> list[tuple[int, int]]:
    """Where subjects end: services, alert names, pods, namespaces, windows, dates, log stores,
    punctuation."""
    spans: list[tuple[int, int]] = []
    # `known`: the service mentions and alert names the question was found to hold.
    known = [*known, *_pods_of(lowered, known)]
    for name in known:
        if name.isascii():
            pattern = _ASCII_LEFT + re.escape(name.lower()) + _ASCII_RIGHT
        else:
            pattern = re.escape(name.lower())
        spans.extend(m.span() for m in re.finditer(pattern, lowered))
    named = (*_SERVICE_RE.finditer(question), *_CAMEL_RE.finditer(question))
    windows = (*_ZH_WINDOW.finditer(question), *_EN_WINDOW.finditer(question), *_PUNCT.finditer(question))
    spans.extend([*(m.span(1) for m in named), *(m.span() for m in windows), *clock_spans(question)])
    if known:  # a namespace beside the service asked about is where it runs, not a search term
        spans.extend(m.span(1) for regex in _NAMESPACE_NAME for m in regex.finditer(question))
    spans.extend(m.span() for m in _DATES.finditer(question))
    for store in _LOG_STORES:
        spans.extend(m.span() for m in re.finditer(_flexible(store), lowered))
    return spans


def _subjects(
    question: str, lowered: str, known: Iterable[str], log_terms: tuple[LogTerm, ...]
) -> tuple[list[LogTerm], list[tuple[int, int]], list[tuple[int, int]]]:
    """(subject terms, subject spans, literal spans) of a log question."""
    mask = [_FREE] * len(question)
    literal_spans: list[tuple[int, int]] = []
    # Covered: what the vocabulary or a literal term already maps.
    for regex in (_POOL_RE, _EXCEPTION_RE, _ERRNO_RE, _K8S_REASON_RE, _STATUS_RE, _QUOTED_RE):
        for match in regex.finditer(question):
            literal_spans.append(match.span())
            _mark(mask, *match.span(), _COVERED)
    phrases = [trigger for entry in LOG_TERMS for trigger in (*entry.triggers, *entry.descriptors)]
    for word in (
        *(w for symptom in symptoms() for w in (*symptom.triggers, *symptom.descriptors)),
        *COMPONENT_WORDS,
    ):
        left = r"(?<![a-z0-9])" if word.isascii() else ""
        for match in re.finditer(left + _flexible(word), lowered):
            _mark(mask, *match.span(), _COVERED)
    if any(term.name.isdigit() for term in log_terms):
        phrases.extend(_STATUS_WORDS)
    for phrase in phrases:
        # an ASCII phrase from a word's start: "space" is not inside "namespace"
        left = r"(?<![a-z0-9])" if phrase.isascii() else ""
        for match in re.finditer(left + _flexible(phrase), lowered):
            _mark(mask, *match.span(), _COVERED)
    for term in log_terms:
        for match in re.finditer(re.escape(term.name.lower()), lowered):
            _mark(mask, *match.span(), _COVERED)
    # Breaks: services, alert names, windows, punctuation, function words.
    spans = _break_spans(question, lowered, known)
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


def _pods_of(lowered: str, known: Iterable[str]) -> list[str]:
    """Pod names of the services the question names ("transcoder-7f9c6d5b8-x2kqz", "billing-db-0"):
    the pod stands for its workload, and is no search term."""
    names = {name.lower() for name in known}
    return [m.group(0) for m in _POD_NAME.finditer(lowered) if service_of_pod(m.group(0)) in names]


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
