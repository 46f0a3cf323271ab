"""The subject of a log question that the vocabulary does not map ("Full GC", "用户登录失败"): what is
left of the question once its service, level, window, alert names, mapped terms and function words
are taken away becomes an exact term of the query."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.server.sources.logs.layouts import service_of_pod
from evigate.server.understanding.clock import clock_spans
from evigate.server.understanding.subject_words import (
    _DATES,
    _EN_STOP,
    _LOG_STORES,
    _NAMESPACE_NAME,
    _ZH_EDGE,
    _ZH_SEPARATORS,
    EN_PEOPLE,
    EN_REPORTING,
)
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

_POD_NAME = re.compile(r"(?<![\w.-])[a-z0-9]+(?:-[a-z0-9]+)*-[a-z0-9]+(?![\w-])")
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
# An identifier is searched whole, whatever its words: snake_case (payment_timeout, ERR_CONN_REFUSED),
# dotted (db.pool.size, app.worker), or an error code of letters and digits (ORA-00942, E11000).
_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9_.-])(?:[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?:\.[A-Za-z0-9_]+)*"
    r"|[A-Za-z][A-Za-z0-9_-]+(?:\.[A-Za-z_][A-Za-z0-9_-]+)+"
    r"|[A-Z]{1,5}-?[0-9]{4,})(?![A-Za-z0-9_-]|\.[A-Za-z0-9])"
)
# Between who reports and the reporting verb ("users have been saying", "my team keeps noticing").
_REPORT_GAP = frozenset({"are", "is", "have", "has", "been", "keep", "keeps", "also", "all", "just"})


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
    known = list(known)
    mask = [_FREE] * len(question)
    literal_spans: list[tuple[int, int]] = []
    identifiers = _identifiers(question, lowered, known)
    for _, span in identifiers:
        literal_spans.append(span)
        _mark(mask, *span, _BREAK)  # whole, never a part of a longer subject nor split
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
    found_words = list(_WORD.finditer(question))
    for index, match in enumerate(found_words):
        word = match.group(0)
        if word.isascii():
            if len(word) == 1 or word.lower() in _EN_STOP or _reports(found_words, index):
                _mark(mask, *match.span(), _BREAK)
            continue
        for phrase in _ZH_SEPARATORS:
            for found in re.finditer(re.escape(phrase), word):
                start, end = match.start() + found.start(), match.start() + found.end()
                if all(mask[i] == _FREE for i in range(start, end)):
                    _mark(mask, start, end, _BREAK)
    _trim_chinese_edges(question, mask)

    subjects: list[LogTerm] = [term for term, _ in identifiers]
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


def _identifiers(question: str, lowered: str, known: Iterable[str]) -> list[tuple[LogTerm, tuple[int, int]]]:
    """The identifiers of the question as exact terms, but for the names of what it asks about (a
    snake_case service, a dotted pod) and those inside a quoted or otherwise literal term."""
    taken = _names(lowered, known)
    taken.extend(m.span(1) for regex in _NAMESPACE_NAME for m in regex.finditer(question))
    for regex in (_POOL_RE, _EXCEPTION_RE, _ERRNO_RE, _K8S_REASON_RE, _QUOTED_RE):
        taken.extend(m.span() for m in regex.finditer(question))
    found = []
    for match in _IDENTIFIER.finditer(question):
        start, end = match.span()
        if any(s < end and start < e for s, e in taken):
            continue
        text = match.group(0)
        found.append((LogTerm(text, text, None, text, text), (start, end)))
    return found


def _names(lowered: str, known: Iterable[str]) -> list[tuple[int, int]]:
    """Where the named services, alerts and pods are written."""
    spans: list[tuple[int, int]] = []
    for name in [*known, *_pods_of(lowered, known)]:
        spans.extend(m.span() for m in re.finditer(re.escape(name.lower()), lowered))
    return spans


def _reports(words: list[re.Match[str]], index: int) -> bool:
    """Whether the word at `index` is who reports ("users" in "users say", "team" in "my team has
    noticed"): a people word followed by a reporting verb."""
    if words[index].group(0).lower() not in EN_PEOPLE:
        return False
    for match in words[index + 1 : index + 4]:
        word = match.group(0).lower()
        if word in EN_REPORTING:
            return True
        if word not in _REPORT_GAP:
            return False
    return False


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
