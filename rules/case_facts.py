"""Structured case fields from a session's verified evidence (docs/design.md §5.6).

A case made by useful feedback gets a fault category, an error code, its services and its alert
names. Every value comes out of the verified excerpts (the evidence bindings of claims the
Gatekeeper let through and the Verifier found supported) or the session's plan (its skill and the
services its tool calls named); a category is chosen from the catalog (rules/fault-categories.json,
overridable) by the signals those texts hold, and is `unknown` when none matches. Nothing is
guessed: no excerpt, no value.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from evigate.rules.enums import ClaimType, Severity
from evigate.rules.errors import EvigateError

DEFAULT_PATH = Path(__file__).with_name("fault-categories.json")
SIGNALS = ("alert", "skill", "exception", "pattern")

# Error codes, the most specific kind first: a qualified exception class names the failing
# library, a vendor code (ORA-00060, ERR_SSL_PROTOCOL) one condition, an errno a system call's
# failure, a bare exception class a language-wide condition, an HTTP status only a class of replies.
# A qualified class printed as a thrown exception is (pkg.Class: message), whatever its suffix
# (django.core.exceptions.ImproperlyConfigured).
_QUALIFIED_EXCEPTION = re.compile(
    r"\b(?:[a-z_][a-z0-9_]*\.)+[A-Z]\w*(?:Exception|Error)\b"
    r"|\b(?:[a-z_][a-z0-9_]*\.){2,}[A-Z][A-Za-z0-9]+(?=: )"
)
_VENDOR_CODE = re.compile(r"\b(?:[A-Z]{2,6}-\d{3,5}|ERR_[A-Z][A-Z0-9_]{2,})\b")
_ERRNO = re.compile(
    r"\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOSPC|ACCES|PERM"
    r"|PIPE|NOENT|MFILE|NFILE|ADDRINUSE|NOMEM|DQUOT|ROFS|AGAIN)\b"
)
_BARE_EXCEPTION = re.compile(r"(?<![\w.])[A-Z][A-Za-z0-9]*(?:Exception|Error)\b")
_HTTP_STATUS = re.compile(
    r"(?:\bHTTP(?:/[12](?:\.[01])?)?[ :=]?|\bstatus[ _]?(?:code)?[=: ]+|\bcode[=: ]+"
    r"|\b(?:GET|POST|PUT|PATCH|DELETE|HEAD) \S+ )([45]\d\d)\b"
    r"|\b([45]\d\d)(?= (?:Bad Gateway|Service Unavailable|Gateway Timeout|Internal Server Error"
    r"|Too Many Requests|Unauthorized|Forbidden|Not Found|Bad Request))",
    re.IGNORECASE,
)
_SERVICE_FIELD = re.compile(r"\bservice=([A-Za-z0-9][\w.-]*[A-Za-z0-9])")
_ALERT_FIELD = re.compile(r"\balert(?:_?name)?=([A-Za-z][A-Za-z0-9_]+)", re.IGNORECASE)
# An alert item's excerpt starts with its name (query_metrics: "HighCPUUsage, service=…").
_LEADING_ALERT = re.compile(r"^([A-Z][A-Za-z0-9_]*[A-Z][A-Za-z0-9_]*)\s*,")


class FaultCatalogError(EvigateError, ValueError):
    """The fault-category catalog cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class FaultCategory:
    name: str
    alerts: tuple[str, ...]  # fragments of alert names, case-insensitive
    skills: tuple[str, ...]  # skill names, exact
    exceptions: tuple[str, ...]  # exception class simple names, or their endings
    patterns: tuple[re.Pattern[str], ...]  # searched in the excerpts' text, case-insensitive


@dataclass(frozen=True)
class FaultCatalog:
    version: str
    fallback: str
    weights: Mapping[str, int]
    categories: tuple[FaultCategory, ...]


@dataclass(frozen=True)
class VerifiedExcerpt:
    tool_name: str
    text: str


@dataclass(frozen=True)
class CaseEvidence:
    """What a session verified: the excerpts of its supported claims, its plan's skill and the
    services its tool calls named."""

    excerpts: tuple[VerifiedExcerpt, ...]
    skill: str | None = None
    planned_services: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseFacts:
    fault_category: str
    error_code: str | None
    services: tuple[str, ...]
    alert_names: tuple[str, ...]
    signals: tuple[str, ...] = field(default=())  # why the category: "alert:HighCPUUsage", ...

    def to_seed(self) -> dict[str, Any]:
        return {
            "fault_category": self.fault_category,
            "error_code": self.error_code,
            "services": list(self.services),
            "alert_names": list(self.alert_names),
            "signals": list(self.signals),
        }


def parse_fault_catalog(data: Any, origin: str) -> FaultCatalog:
    def fail(problem: str) -> FaultCatalogError:
        return FaultCatalogError(f"{origin}: {problem}")

    if not isinstance(data, dict) or not isinstance(data.get("categories"), list):
        raise fail("expected an object with a list of categories")
    weights = data.get("weights", {})
    if not isinstance(weights, dict) or not all(
        k in SIGNALS and type(v) is int and v >= 0 for k, v in weights.items()
    ):
        raise fail(f"weights must map {', '.join(SIGNALS)} to non-negative integers")
    categories = []
    for number, item in enumerate(data["categories"]):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            raise fail(f"category #{number} needs a name")
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("alerts", "skills", "exceptions", "patterns"):
            value = item.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise fail(f"category {item['name']}: {key} must be a list of non-empty strings")
            lists[key] = tuple(value)
        try:
            patterns = tuple(re.compile(p, re.IGNORECASE) for p in lists["patterns"])
        except re.error as exc:
            raise fail(f"category {item['name']}: bad pattern: {exc}") from exc
        categories.append(
            FaultCategory(item["name"], lists["alerts"], lists["skills"], lists["exceptions"], patterns)
        )
    fallback = data.get("fallback", "unknown")
    if not isinstance(fallback, str) or not fallback:
        raise fail("fallback must be a non-empty string")
    version = data.get("version", "")
    return FaultCatalog(
        str(version), fallback, {s: int(weights.get(s, 1)) for s in SIGNALS}, tuple(categories)
    )


def load_fault_catalog(path: Path | None = None) -> FaultCatalog:
    """The shipped catalog (cached) or an operator's file."""
    if path is None:
        return _default_catalog()
    return _load(path)


def _load(path: Path) -> FaultCatalog:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise FaultCatalogError(f"{path}: cannot read the fault-category catalog: {exc}") from exc
    return parse_fault_catalog(data, str(path))


@lru_cache(maxsize=1)
def _default_catalog() -> FaultCatalog:
    return _load(DEFAULT_PATH)


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def alert_names(evidence: CaseEvidence) -> tuple[str, ...]:
    names: list[str] = []
    for excerpt in evidence.excerpts:
        if excerpt.tool_name in {"query_metrics", "query_alerts"}:
            leading = _LEADING_ALERT.match(excerpt.text.strip())
            if leading:
                names.append(leading.group(1))
        names.extend(m.group(1) for m in _ALERT_FIELD.finditer(excerpt.text))
    return _unique(names)


def services(evidence: CaseEvidence) -> tuple[str, ...]:
    """`service=` fields of the excerpts, and planned services that an excerpt names."""
    found = [m.group(1) for e in evidence.excerpts for m in _SERVICE_FIELD.finditer(e.text)]
    texts = [e.text for e in evidence.excerpts]
    found.extend(s for s in evidence.planned_services if any(_word(s).search(t) for t in texts))
    return _unique(found)


def _word(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")


def error_codes(evidence: CaseEvidence) -> tuple[str, ...]:
    """Every error code of the excerpts, the most specific kind first, then the most frequent."""
    texts = [e.text for e in evidence.excerpts]
    ranked: list[str] = []
    for finder in (_qualified, _vendor, _errno, _bare, _http):
        counts: Counter[str] = Counter()
        order: dict[str, int] = {}
        for text in texts:
            for value in finder(text):
                counts[value] += 1
                order.setdefault(value, len(order))
        ranked.extend(sorted(counts, key=lambda v: (-counts[v], order[v])))
    return _unique(ranked)


def _qualified(text: str) -> list[str]:
    return [m.group(0) for m in _QUALIFIED_EXCEPTION.finditer(text)]


def _vendor(text: str) -> list[str]:
    return [m.group(0) for m in _VENDOR_CODE.finditer(text) if not m.group(0).startswith("HTTP-")]


def _errno(text: str) -> list[str]:
    return [m.group(0) for m in _ERRNO.finditer(text)]


def _bare(text: str) -> list[str]:
    qualified_tails = {m.rsplit(".", 1)[-1] for m in _qualified(text)}
    return [m.group(0) for m in _BARE_EXCEPTION.finditer(text) if m.group(0) not in qualified_tails]


def _http(text: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _HTTP_STATUS.finditer(text)]


def _exception_names(evidence: CaseEvidence) -> list[str]:
    names = []
    for excerpt in evidence.excerpts:
        names += [m.rsplit(".", 1)[-1] for m in _qualified(excerpt.text)]
        names += _bare(excerpt.text)
    return names


def category(evidence: CaseEvidence, catalog: FaultCatalog) -> tuple[str, tuple[str, ...]]:
    """The catalog category with the most weighted signals (catalog order breaks ties), and the
    signals that chose it; the fallback when no signal matches."""
    alerts = alert_names(evidence)
    exceptions = _exception_names(evidence)
    texts = [e.text for e in evidence.excerpts]
    best: tuple[int, str, tuple[str, ...]] = (0, catalog.fallback, ())
    for entry in catalog.categories:
        signals: list[str] = []
        signals += [f"alert:{a}" for a in alerts if any(f.lower() in a.lower() for f in entry.alerts)]
        if evidence.skill and evidence.skill in entry.skills:
            signals.append(f"skill:{evidence.skill}")
        signals += [
            f"exception:{e}" for e in _unique(exceptions) if any(e.endswith(x) for x in entry.exceptions)
        ]
        signals += [f"pattern:{p.pattern}" for p in entry.patterns if any(p.search(t) for t in texts)]
        weight = sum(catalog.weights[s.split(":", 1)[0]] for s in signals)
        if weight > best[0]:
            best = (weight, entry.name, tuple(signals))
    return best[1], best[2]


def extract(evidence: CaseEvidence, catalog: FaultCatalog | None = None) -> CaseFacts:
    chosen, signals = category(evidence, catalog or load_fault_catalog())
    codes = error_codes(evidence)
    return CaseFacts(
        fault_category=chosen,
        error_code=codes[0] if codes else None,
        services=services(evidence),
        alert_names=alert_names(evidence),
        signals=signals,
    )


def verified_evidence(
    verifier_evaluation: Mapping[str, Any] | None,
    plan: Mapping[str, Any] | None,
    invocation_arguments: Sequence[Mapping[str, Any]] = (),
) -> CaseEvidence:
    """The CaseEvidence of a finished session from its stored final verifier evaluation (claims,
    claim checks and the Gatekeeper's result), its plan and its tool calls' arguments. Only the
    excerpts of supported positive claims count; a rejected round verified nothing."""
    evaluation = verifier_evaluation or {}
    gatekeeper = evaluation.get("gatekeeper_result") or {}
    excerpts: list[VerifiedExcerpt] = []
    if isinstance(gatekeeper, dict) and gatekeeper.get("severity") != Severity.REJECT:
        supported = {
            c.get("claim_id")
            for c in evaluation.get("claim_checks") or []
            if isinstance(c, dict) and c.get("supported") is True
        }
        output = evaluation.get("executor_structured_output") or {}
        for claim in output.get("claims") or [] if isinstance(output, dict) else []:
            if not isinstance(claim, dict) or claim.get("claim_id") not in supported:
                continue
            if claim.get("claim_type") == ClaimType.NEGATIVE_OBSERVATION:
                continue  # it verified an absence: nothing in it describes the fault
            for binding in claim.get("evidence_bindings") or []:
                if isinstance(binding, dict) and isinstance(binding.get("evidence_excerpt"), str):
                    excerpts.append(
                        VerifiedExcerpt(str(binding.get("tool_name", "")), binding["evidence_excerpt"])
                    )
    skill = (plan or {}).get("selected_skill")
    planned = [str(a["service"]) for a in invocation_arguments if isinstance(a.get("service"), str)]
    return CaseEvidence(tuple(excerpts), skill if isinstance(skill, str) else None, _unique(planned))
