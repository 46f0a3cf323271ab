"""The bound facts of the sentence check, prepared once per answer.

A *unit* is one verified excerpt of an allowed claim (a claim without excerpts is one unit of its
own text), read for what the sentence rules compare: its state (firing / resolved / silenced from
the excerpt or its ref, absent for a negative claim, unchecked for a failed call), its scope (alert,
log, metric, knowledge, service: from the tool), its alert name, the services it names, its severity,
the values it gives as current / threshold / limit, and a `FactIndex` of its text. Values and states
are looked up unit by unit, so a value is tied to the subject of the excerpt that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evigate.rules import sentence_phrases as p
from evigate.rules import sentence_words as w
from evigate.rules.answer_facts import FactIndex, normalize
from evigate.rules.enums import ClaimType, ToolName
from evigate.rules.sentence_types import ClaimFacts, Excerpt, SentenceMaterial

_SCOPE_OF_PATH = {
    "alerts": w.ALERT,
    "logs": w.LOG,
    "patterns": w.LOG,
    "series": w.METRIC,
    "evidence_blocks": w.KNOWLEDGE,
    "services": w.SERVICE,
}
_SCOPE_OF_TOOL = {
    ToolName.QUERY_METRICS: w.ALERT,
    ToolName.QUERY_LOGS: w.LOG,
    ToolName.SUMMARIZE_LOGS: w.LOG,
    ToolName.QUERY_PROMQL: w.METRIC,
    ToolName.LOOKUP_KNOWLEDGE: w.KNOWLEDGE,
    ToolName.LIST_SERVICES: w.SERVICE,
}
_STATE_FIELD = re.compile(r"(?<![\w.])(?:state|status|状态)\s*[=:：]\s*\"?([a-z]+)")
_STATE_WORDS = {
    "firing": w.FIRING,
    "active": w.FIRING,
    "pending": w.FIRING,
    "resolved": w.RESOLVED,
    "inactive": w.RESOLVED,
    "ok": w.RESOLVED,
    "silenced": w.SILENCED,
    "suppressed": w.SILENCED,
}
_SEVERITY_FIELD = re.compile(r"(?<![\w.])(?:severity|level|priority)\s*[=:：]\s*\"?([a-z0-9]+)")
_ALERT_FIELD = re.compile(r"(?<![\w.])(?:alert|alertname|alert_name)\s*=\s*\"?([A-Za-z][\w.:-]*)")
_LEADING_NAME = re.compile(r"\s*(?:alert=)?([A-Za-z][\w.:-]*)\s*,")
_SERVICE_FIELD = re.compile(r"(?<![\w.])(?:service|service_name|app|job)\s*=\s*\"?([a-z0-9][\w.-]*)")
# key=value with the value up to the next separator; the key's last dotted part names its role.
_PAIR = re.compile(r"([a-z_][\w.]*)\s*=\s*([^,;|]+)")


@dataclass(frozen=True)
class Unit:
    claim: ClaimFacts
    text: str  # normalised excerpt
    claim_text: str  # normalised claim text
    tool: str
    state: str
    scope: str
    alert: str  # lowercase alert name, "" when none
    services: frozenset[str]  # canonical, lowercase
    severity: str
    index: FactIndex
    subject: FactIndex  # what a negative or failed query asked for (query=, name=, service=, …)
    role_values: tuple[tuple[str, FactIndex], ...]  # (role, the value text) of current= / threshold= …


class Names:
    """The service names a session knows: the catalog's (any shape), their aliases, and every
    `service=` of an excerpt; found in a text case- and separator-insensitively, whole."""

    def __init__(self, catalog: Iterable[str], aliases: Iterable[tuple[str, str]], extra: Iterable[str]):
        self.canonical: dict[str, str] = {}
        for name in [*catalog, *extra]:
            flat = normalize(name).strip()
            if flat:
                self.canonical.setdefault(_squash(flat), flat)
        for alias, name in aliases:
            flat = normalize(alias).strip()
            if flat and normalize(name).strip():
                self.canonical.setdefault(_squash(flat), normalize(name).strip())
        # ASCII names end where ASCII letters end (a Chinese word may follow with no space)
        pieces = sorted(
            {
                rf"(?<![a-z0-9_.-]){_flexible(n)}(?![a-z0-9_-]|\.[a-z0-9])" if n.isascii() else re.escape(n)
                for n in self.canonical
            },
            key=len,
            reverse=True,
        )
        self.pattern = re.compile("|".join(pieces)) if pieces else None

    def find(self, flat: str) -> list[tuple[str, int, int]]:
        """(canonical name, start, end) of each name in lowercase text."""
        if self.pattern is None:
            return []
        return [
            (self.canonical[_squash(m.group())], m.start(), m.end())
            for m in self.pattern.finditer(flat)
            if _squash(m.group()) in self.canonical
        ]


def _squash(name: str) -> str:
    return re.sub(r"[-_.\s]+", "", name)


def _flexible(squashed: str) -> str:
    """A squashed name as a pattern that allows -, _, . or a space between its words (catalog-api,
    "Catalog API") — the word boundaries of the original name are gone, so any may be split."""
    return r"[-_.\s]?".join(re.escape(ch) for ch in squashed)


class Prepared:
    """A material's units and indexes, built once for all the sentences of an answer."""

    def __init__(self, material: SentenceMaterial) -> None:
        self.material = material
        excerpts = [e for c in material.claims for e in c.excerpts]
        extra = [m.group(1) for e in excerpts for m in _SERVICE_FIELD.finditer(normalize(e.text))]
        self.names = Names(material.catalog, material.aliases, extra)
        self.units: dict[str, list[Unit]] = {c.claim_id: self._units(c) for c in material.claims}
        self.claim_index = {
            c.claim_id: FactIndex.union([FactIndex([c.text]), *(u.index for u in self.units[c.claim_id])])
            for c in material.claims
        }
        self.claim_flat = {
            c.claim_id: [normalize(t) for t in (c.text, *(e.text for e in c.excerpts)) if t]
            for c in material.claims
        }
        self.claim_names = {
            c.claim_id: {n for t in self.claim_flat[c.claim_id] for n, _, _ in self.names.find(t)}
            for c in material.claims
        }
        self.hypothesis_index = {h.hypothesis_id: FactIndex([h.text]) for h in material.hypotheses}
        self.hypothesis_flat = {h.hypothesis_id: normalize(h.text) for h in material.hypotheses}
        self.alerts = {u.alert for units in self.units.values() for u in units if u.alert}

    def _units(self, claim: ClaimFacts) -> list[Unit]:
        claim_text = normalize(claim.text)
        claim_services = {n for n, _, _ in self.names.find(claim_text)}
        excerpts = claim.excerpts or (Excerpt(claim.text),)
        return [self._unit(claim, claim_text, e, claim_services) for e in excerpts]

    def _unit(self, claim: ClaimFacts, claim_text: str, excerpt: Excerpt, claim_services: set[str]) -> Unit:
        flat = normalize(excerpt.text)
        ref = normalize(excerpt.ref_text)
        scope = _scope(excerpt)
        # an excerpt's own service= field is its subject (labels.upstream=order-service is not);
        # without one, every service it names
        services = {
            self.names.canonical.get(_squash(m.group(1)), m.group(1)) for m in _SERVICE_FIELD.finditer(flat)
        }
        services = services or {n for n, _, _ in self.names.find(flat)}
        if not services and not claim.negative and not claim.failed:
            services = set(claim_services)  # a log pattern names no service; its claim does
        alert = _ALERT_FIELD.search(excerpt.text)
        if alert is None and scope == w.ALERT and claim.claim_type != ClaimType.NEGATIVE_OBSERVATION:
            alert = _LEADING_NAME.match(excerpt.text)
        index = FactIndex([excerpt.text])
        return Unit(
            claim=claim,
            text=flat,
            claim_text=claim_text,
            tool=excerpt.tool,
            state=_state(claim, flat, ref),
            scope=scope,
            alert=alert.group(1).lower() if alert else "",
            services=frozenset(services),
            severity=_severity(flat, ref),
            index=index,
            subject=_subject(claim, excerpt.text, index),
            role_values=tuple(_role_values(flat)),
        )

    def bound_units(self, claim_ids: Iterable[str]) -> list[Unit]:
        return [u for cid in claim_ids for u in self.units.get(cid, ())]

    def all_units(self) -> list[Unit]:
        return [u for units in self.units.values() for u in units]


_ASKED = re.compile(
    r"(?<![\w.])(?:query|name|service|alert_name|alertname|keyword|pattern|signal|expr|level)\s*=\s*([^;|]+)"
)


def _subject(claim: ClaimFacts, text: str, index: FactIndex) -> FactIndex:
    """What a negative or failed query was about: its arguments, not the closest names it suggests."""
    if not (claim.negative or claim.failed):
        return index
    asked = [m.group(1) for m in _ASKED.finditer(text)]
    if claim.failed:
        asked.extend(re.findall(r"\(([^()]*)\)", text)[:1])  # tool(arguments) failed (…)
    return FactIndex(asked) if asked else index


def _scope(excerpt: Excerpt) -> str:
    array = re.match(r"\$\.(\w+)\[", excerpt.raw_path)
    if array is not None and array.group(1) in _SCOPE_OF_PATH:
        return _SCOPE_OF_PATH[array.group(1)]
    return next((scope for tool, scope in _SCOPE_OF_TOOL.items() if tool == excerpt.tool), "")


def _state(claim: ClaimFacts, flat: str, ref: str) -> str:
    if claim.failed:
        return w.UNCHECKED
    if claim.claim_type == ClaimType.NEGATIVE_OBSERVATION:
        return w.ABSENT
    for text in (flat, ref):
        found = _STATE_FIELD.search(text)
        if found is not None and found.group(1) in _STATE_WORDS:
            return _STATE_WORDS[found.group(1)]
    return w.FOUND


def _severity(flat: str, ref: str) -> str:
    for text in (flat, ref):
        found = _SEVERITY_FIELD.search(text)
        if found is not None and found.group(1) in w.REF_SEVERITY:
            return w.REF_SEVERITY[found.group(1)]
    return ""


def _role_values(flat: str) -> Iterable[tuple[str, FactIndex]]:
    for match in _PAIR.finditer(flat):
        key = match.group(1).rsplit(".", 1)[-1]
        for role, keys in p.ROLE_KEYS.items():
            if key in keys:
                yield role, FactIndex([match.group(2)])


def compatible(unit: Unit, alert: str | None, service: str | None) -> bool:
    """The unit can speak of this alert and service: it names them, or names none of that kind."""
    if alert is not None and unit.alert and unit.alert != alert:
        return False
    return service is None or not unit.services or service in unit.services


def holds(unit: Unit, names: Iterable[str]) -> bool:
    """Every name is what the unit is about: for a negative query, what it asked for."""
    return all(n == unit.alert or unit.subject.supports(n, "word") for n in names)


def severities(units: Iterable[Unit]) -> set[str]:
    return {u.severity for u in units if u.severity}


def words_in(texts: Iterable[str], pattern: re.Pattern[str]) -> bool:
    return any(pattern.search(t) for t in texts)


def claim_texts(prepared: Prepared, claim_ids: Iterable[str], hypothesis_ids: Iterable[str]) -> list[str]:
    """The normalised texts a sentence is bound to: its claims' texts and excerpts, its hypotheses."""
    texts = [t for cid in claim_ids for t in prepared.claim_flat.get(cid, ())]
    texts.extend(prepared.hypothesis_flat[h] for h in hypothesis_ids if h in prepared.hypothesis_flat)
    return texts


def by_claim(units: Iterable[Unit]) -> Mapping[str, list[Unit]]:
    out: dict[str, list[Unit]] = {}
    for u in units:
        out.setdefault(u.claim.claim_id, []).append(u)
    return out
