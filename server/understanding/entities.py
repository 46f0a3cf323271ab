"""Entities of a narrow operations question, in Chinese or English, by table lookup and patterns.

The offline agents query exactly what the question names: the services, alert names, log terms,
level and time window found here become the tool arguments, nothing looser. A log question's subject
that the vocabulary does not map ("Full GC", "用户登录失败") is a log term too: its own words, as an
exact keyword or a precise pattern, never dropped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

from evigate.server.sources.logs.layouts import service_of_pod
from evigate.server.sources.services import CatalogView, ServiceCatalog, ServiceMatch
from evigate.server.understanding.clock import clock_window
from evigate.server.understanding.mentions import alerts_in, paraphrase_alerts, services_in
from evigate.server.understanding.semantic_names import NameVectors, with_semantic
from evigate.server.understanding.subjects import _with_subjects
from evigate.server.understanding.symptoms import Symptom, found_symptoms, trigger_spans
from evigate.server.understanding.vocabulary import (
    _ALERT_MARKERS,
    _BROAD_MARKERS,
    _CN_DIGITS,
    _CURRENT_MARKERS,
    _EN_WINDOW,
    _ERRNO_RE,
    _ERROR_MARKERS,
    _EXCEPTION_RE,
    _GUIDANCE_MARKERS,
    _K8S_REASON_RE,
    _LIST_MARKERS,
    _LOG_MARKERS,
    _POOL_RE,
    _QUOTED_RE,
    _RESOLVED_MARKERS,
    _STATUS_RE,
    _STEPS_MARKERS,
    _UNIT_MINUTES,
    _WARN_MARKERS,
    _ZH_WINDOW,
    LOG_TERMS,
    LogTerm,
)

Catalog = CatalogView | Iterable[str] | None


@dataclass(frozen=True)
class Entities:
    """What a question names. `intents` is ordered: "alert", "log", "knowledge"."""

    services: tuple[str, ...]
    alert_names: tuple[str, ...]
    log_terms: tuple[LogTerm, ...]
    level: str | None  # "ERROR" | "WARN"
    window_minutes: int | None
    current: bool  # "now" / "当前"
    resolved: bool  # asks for resolved alerts only
    intents: tuple[str, ...]
    unknown_services: tuple[str, ...] = ()  # service-shaped names no source knows
    service_matches: tuple[ServiceMatch, ...] = ()
    symptoms: tuple[Symptom, ...] = ()
    paraphrased: bool = False  # alert names found from the question's words, not written out
    wants_steps: bool = False  # asks for a runbook's steps or commands
    asks_log: bool = False  # names logs (日志, logs, errors), not only a symptom
    clock: tuple[str, str] | None = None  # a time of day's window ("06:00", "07:00"): clock.py
    namespaces: tuple[str, ...] = ()  # Kubernetes namespaces the question names
    namespace_services: tuple[str, ...] = ()  # the services the catalog places in them
    listing: bool = False  # asks for every item or for the logs themselves ("list the errors")

    @property
    def intent(self) -> str:
        return self.intents[0] if self.intents else "unknown"

    @property
    def wants_guidance(self) -> bool:
        return "knowledge" in self.intents

    @property
    def names_window(self) -> bool:
        """The question names its window (relative or by the clock): it is never widened."""
        return self.window_minutes is not None or self.clock is not None

    @property
    def survey(self) -> bool:
        return "survey" in self.intents

    @property
    def alert_state(self) -> str | None:
        """A state filter only for "which alerts are firing now?" (no service, no alert name): "is
        X's alert still firing?" and "did it resolve?" are answered from every state, each alert
        stated as firing or resolved (with when), or as never seen."""
        listing = not self.alert_names and not self.services and not self.unknown_services
        return "firing" if self.current and listing and not self.resolved else None


def asks_for_the_logs_listed(question: str) -> bool:
    """ "Fetch the logs of X", "summarize the errors", "列出日志里所有的错误": the user asked for the
    logs' items themselves, each distinct template, which the Planner lists (purpose "list") and the
    Composer does not cut to the most severe."""
    lowered = question.lower()
    return _contains_any(lowered, _LIST_MARKERS) and _contains_any(lowered, _LOG_MARKERS)


def asks_steps(question: str) -> bool:
    """ "How do I fix it?", "怎么处理": the question asks for a procedure, the runbook's steps."""
    return _contains_any(question.lower(), _STEPS_MARKERS)


def _contains_any(text: str, markers: Iterable[str]) -> bool:
    return any(_has_marker(text, marker) for marker in markers)


def _has_marker(text: str, marker: str) -> bool:
    # ASCII markers are whole words (so "now" is not found in "known"); Chinese ones are substrings.
    if marker.isascii():
        return re.search(r"(?<![a-z])" + re.escape(marker) + r"(?![a-z])", text) is not None
    return marker in text


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _log_terms(question: str, lowered: str) -> tuple[LogTerm, ...]:
    terms: list[LogTerm] = []
    literal_names: set[str] = set()
    for match in _POOL_RE.finditer(question):
        name = match.group(1)
        literal_names.add(name)
        terms.append(LogTerm(name, name, None, name, name))
    literal_spans: list[tuple[int, int]] = []
    for match in (
        *_EXCEPTION_RE.finditer(question),
        *_ERRNO_RE.finditer(question),
        *_K8S_REASON_RE.finditer(question),
    ):
        literal_spans.append(match.span(1))
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
    for entry in LOG_TERMS:
        if entry.term.name in literal_names:
            continue
        spans = [span for trigger in entry.triggers for span in trigger_spans(trigger, lowered)]
        # A concept found only inside a literal ("oom" in "OOMKilled") is that literal's part.
        hit = any(not any(s <= a and b <= e for s, e in literal_spans) for a, b in spans)
        if entry.term.name == "HikariCP" and any(name.startswith("HikariPool-") for name in literal_names):
            continue  # the exact pool name is narrower than the concept
        if hit:
            terms.append(entry.term)
    return tuple(terms)


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


async def catalog_view(
    catalog: ServiceCatalog | None, question: str, *, refresh_on_miss: bool = False
) -> CatalogView | None:
    """The catalog's view for `question`. `refresh_on_miss` (the Planner, the session's first
    stage): when the question names a service the view does not know, the sources are read again
    first (a service that appeared since the last refresh), so no stage answers from a stale miss."""
    if catalog is None:
        return None
    asked_at = time.monotonic()
    view = await catalog.ensure()
    read = extract(question, view)
    if refresh_on_miss and read.unknown_services:
        view = await catalog.on_miss(asked_at)
        read = extract(question, view)
    if read.services or read.unknown_services or read.namespaces:
        return view
    # No service named by its name: one named by meaning ("the order router"), if any.
    by_meaning = catalog.by_meaning
    return await with_semantic(view, question, by_meaning if isinstance(by_meaning, NameVectors) else None)


def _catalog(catalog: Catalog) -> CatalogView | None:
    if catalog is None or isinstance(catalog, CatalogView):
        return catalog
    return CatalogView({name: ("config",) for name in catalog})


_NAMESPACE_MARK = re.compile(r"namespaces?\b|命名空间|名字空间|\bns\b", re.IGNORECASE)


def namespaces_in(question: str, view: CatalogView | None) -> tuple[str, ...]:
    """The catalog's namespaces the question names: a namespace's name when the question says
    "namespace" (or the name is no service's), as a whole word."""
    if view is None or not view.namespaces:
        return ()
    marked = _NAMESPACE_MARK.search(question) is not None
    found = []
    for namespace in view.namespaces:
        hit = re.search(r"(?<![\w.-])" + re.escape(namespace) + r"(?![\w-])", question, re.IGNORECASE)
        if hit is not None and (marked or view.match(namespace) is None):
            found.append(namespace)
    return tuple(found)


def extract(question: str, catalog: Catalog = None) -> Entities:
    """The entities of `question`, resolved against the service catalog. Pure and deterministic."""
    view = _catalog(catalog)
    lowered = question.lower()
    log_terms = _log_terms(question, lowered)
    literal = [term.name for term in log_terms]
    written = alerts_in(question, view, literal)
    namespaces = namespaces_in(question, view)
    mentions = services_in(question, view, skip=[*(name for _, name in written), *namespaces])
    symptoms = [symptom for _, symptom in found_symptoms(lowered)]
    window = _window_minutes(question)
    current = _contains_any(lowered, _CURRENT_MARKERS)
    resolved = _contains_any(lowered, _RESOLVED_MARKERS)
    level = _level(lowered)
    asks_alert = _contains_any(lowered, _ALERT_MARKERS)
    asks_log = _contains_any(lowered, _LOG_MARKERS)
    written, logged = _logged_names(question, written, view, asks_log and not asks_alert)
    log_terms = (*log_terms, *logged)
    alert_names = tuple(dict.fromkeys(name for _, name in sorted(written)))
    paraphrased = False
    if not alert_names and symptoms and (asks_alert or not asks_log):
        alert_names = tuple(paraphrase_alerts(question, view, symptoms, mentions.spans, mentions.services))
        paraphrased = bool(alert_names)
    # A symptom is a log term of its own only where the question is not about an alert.
    if asks_alert and not asks_log:
        log_terms = tuple(t for t in log_terms if t.name in literal and _is_literal(t))
    services = mentions.services
    # A quoted name of the service the question is about ("the logs of `billing-api`", a pod of it)
    # is its subject, never a search term.
    subject = {m.mention.lower() for m in mentions.matches} | {name.lower() for name in services}
    log_terms = tuple(t for t in log_terms if not {t.name.lower(), service_of_pod(t.name.lower())} & subject)
    if namespaces and not services and not written:
        # "what is wrong in the accounts namespace?": a survey of the namespace's services
        asks_log = asks_log or level is not None
    broad = bool(services or mentions.unknown) and _contains_any(lowered, _BROAD_MARKERS)

    intents: list[str] = []
    if broad:
        intents.append("survey")
    if alert_names or asks_alert:
        intents.append("alert")
    if log_terms or asks_log or (level is not None and "alert" not in intents):
        intents.append("log")
    if _contains_any(lowered, _GUIDANCE_MARKERS):
        intents.append("knowledge")
    if namespaces and not services and not intents:
        intents.append("survey")
    if not intents and (services or mentions.unknown):
        # A service and nothing this reading knows to ask of it ("is X falling behind?", "X 的 GC
        # 情况"): a survey of the service, never no call at all.
        intents.append("survey")
    if "knowledge" in intents and not services and not mentions.unknown:
        # "How do I handle HikariCP pool exhaustion?" asks for guidance, not for a scan of every service.
        intents = ["knowledge"]
    if "log" not in intents:
        level = None  # a level only narrows log queries
    elif len(lowered) == len(question) and (asks_log or level is not None):
        # Only a question about logs has a subject of its own words ("Full GC", "用户登录失败"): a
        # paraphrase ("is the backlog severe?") is searched by its symptoms' patterns.
        named = [*(m.mention for m in mentions.matches), *mentions.unknown, *alert_names, *namespaces]
        log_terms = _with_subjects(question, lowered, named, log_terms)
    return Entities(
        services=services,
        alert_names=alert_names,
        log_terms=log_terms,
        level=level,
        window_minutes=window,
        current=current,
        resolved=resolved,
        intents=tuple(intents),
        unknown_services=mentions.unknown,
        service_matches=mentions.matches,
        symptoms=tuple(symptoms),
        paraphrased=paraphrased,
        wants_steps=asks_steps(question),
        asks_log=asks_log or level is not None,
        listing=_contains_any(lowered, _LIST_MARKERS),
        clock=clock_window(question) if window is None else None,
        namespaces=namespaces,
        namespace_services=tuple(
            dict.fromkeys(name for ns in namespaces for name in view.namespaces.get(ns, ()))
        )
        if view is not None
        else (),
    )


# Where a CamelCase word stands for a service: "BookingLedger's logs", "BookingLedger 的日志".
_SERVICE_PLACE = re.compile(r"^(?:'s|’s|\s*的|\s+logs?\b)", re.IGNORECASE)


def _logged_names(
    question: str, written: list[tuple[int, str]], view: CatalogView | None, about_logs: bool
) -> tuple[list[tuple[int, str]], list[LogTerm]]:
    """(alert names, log terms) of a question about logs that asks about no alert: a CamelCase word
    no alert source knows ("mentioning PaymentRetryScheduler", "about the LedgerWriter") is what the
    logs say, an exact term; a name is an alert only when an alert source knows it. A word in a
    service's place stays as it was read. `about_logs`: the question asks about logs, not alerts."""
    if not about_logs:
        return written, []
    known = {name.lower() for name in (view.alert_names if view is not None else ())}
    alerts: list[tuple[int, str]] = []
    terms: list[LogTerm] = []
    for start, name in written:
        place = question[start + len(name) :] if question[start:].startswith(name) else "'s"
        if name.lower() in known or _SERVICE_PLACE.match(place):
            alerts.append((start, name))
        else:
            terms.append(LogTerm(name, name, None, name, name))
    return alerts, terms


def _is_literal(term: LogTerm) -> bool:
    """An exception class, errno, pool name, status code or quoted text (not a vocabulary concept)."""
    return all(entry.term != term for entry in LOG_TERMS)
