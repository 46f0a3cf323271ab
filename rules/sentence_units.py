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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

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
# a label may name a service in its namespace: service=shop/checkout
_SERVICE_FIELD = re.compile(
    r"(?<![\w.])(?:service|service_name|app|job)\s*=\s*\"?([a-z0-9][\w.-]*(?:/[a-z0-9][\w.-]*)?)"
)
# "2026-07-08 23:29:56 ERROR order-service …": the service that wrote a log line
_LOG_WRITER = re.compile(r"\d{4}-\d\d-\d\d[ t][\d:.]+\s+[a-z]+\s+([a-z0-9][\w.-]*)")
# key=value with the value up to the next separator; the key's last dotted part names its role.
# (it starts only where a key can: a start inside a word would fail where the word's own start failed)
_PAIR = re.compile(r"(?<![a-z_])([a-z_][\w.]*)\s*=\s*([^,;|]+)")


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
    pairs: tuple[tuple[str, str], ...]  # (role, value text) of current= / threshold= / limit=
    narrowed: tuple[str, ...] = ()  # what a negative query narrowed itself to (alert_name=, keyword=)


_PIECE = re.compile(r"[a-z0-9]+")
_NAME_WORD = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")


class Names:
    """The service names a session knows: the catalog's (any shape), their aliases, and every
    `service=` of an excerpt; found in a text case- and separator-insensitively, whole ("Catalog API"
    is catalog-api; payment-service-7d9f8 is a pod, not payment-service)."""

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
        # a name or alias of n words ("payments team", catalog-api) may be written as n words with spaces
        written = [normalize(n).strip() for n in [*catalog, *extra, *(alias for alias, _ in aliases)]]
        self.words = max((len(_PIECE.findall(n)) for n in written if n.isascii()), default=0)
        self.other = [n for n in self.canonical if not n.isascii()]  # Chinese aliases: found as written
        # every proper prefix of a name, so that a window of tokens stops growing once none can follow
        self.prefixes = {key[:end] for key in self.canonical for end in range(1, len(key))}
        # `shop/checkout` is the catalog's `checkout` in its namespace `shop`: a sentence may call it
        # either (never `staging/checkout`, another namespace's)
        self.namespaced = {
            name: self.canonical[bare]
            for key, name in self.canonical.items()
            if "/" in key and (bare := key.rsplit("/", 1)[1]) in self.canonical
        }
        self._found: dict[str, list[tuple[str, int, int]]] = {}

    def with_bare(self, names: Iterable[str]) -> set[str]:
        """The names, and the catalog's bare name of each `namespace/name` of them."""
        out = set(names)
        out.update(self.namespaced[n] for n in list(out) if n in self.namespaced)
        return out

    def find(self, flat: str) -> list[tuple[str, int, int]]:
        """(canonical name, start, end) of each name in lowercase text."""
        found = self._found.get(flat)
        if found is None:
            found = self._found[flat] = self._find(flat)
        return list(found)

    def _find(self, flat: str) -> list[tuple[str, int, int]]:
        out: list[tuple[str, int, int]] = []
        if self.words:
            tokens = [(_squash(m.group()), m.start(), m.end()) for m in _NAME_WORD.finditer(flat)]
            i = 0
            while i < len(tokens):
                if i + 1 < len(tokens) and flat[tokens[i][2] : tokens[i + 1][1]] == "/":
                    name = self.canonical.get(f"{tokens[i][0]}/{tokens[i + 1][0]}")
                    if name is not None:  # namespace/name
                        out.append((name, tokens[i][1], tokens[i + 1][2]))
                        i += 2
                        continue
                # the longest window of tokens written one space apart that is a name
                joined, longest = "", 0
                for n in range(min(self.words, len(tokens) - i)):
                    if n and flat[tokens[i + n - 1][2] : tokens[i + n][1]] != " ":
                        break
                    joined += tokens[i + n][0]
                    if joined in self.canonical:
                        longest = n + 1
                    if joined not in self.prefixes:
                        break
                if longest:
                    name = self.canonical[_joined(tokens, i, longest)]
                    out.append((name, tokens[i][1], tokens[i + longest - 1][2]))
                    i += longest
                    continue
                i += 1
        for alias in self.other:
            at = flat.find(alias)
            while at >= 0:
                out.append((self.canonical[alias], at, at + len(alias)))
                at = flat.find(alias, at + len(alias))
        return sorted(out, key=lambda found: found[1])


def _joined(tokens: list[tuple[str, int, int]], start: int, count: int) -> str:
    return "".join(t[0] for t in tokens[start : start + count])


_SQUASH = str.maketrans("", "", "-_. \t\n")


def _squash(name: str) -> str:
    return name.translate(_SQUASH)


@dataclass(frozen=True)
class ClaimPrep:
    """One claim, prepared: its units, an index and the normalised texts of its text and excerpts,
    and the services they name (`facts`: those its findings name, not only the runbook it quotes)."""

    units: list[Unit]
    index: FactIndex
    flat: list[str]
    names: set[str]
    facts: set[str]


class Prepared:
    """A material prepared for the sentences of one answer: the names it knows at once, each claim
    when a sentence is first bound to it (most sentences speak of one or two claims)."""

    def __init__(self, material: SentenceMaterial) -> None:
        self.material = material
        excerpts = [e for c in material.claims for e in c.excerpts]
        extra = [m.group(1) for e in excerpts for m in _SERVICE_FIELD.finditer(e.text.lower())]
        self.names = Names(material.catalog, material.aliases, extra)
        self.hypothesis_index = {h.hypothesis_id: FactIndex([h.text]) for h in material.hypotheses}
        self.hypothesis_flat = {h.hypothesis_id: normalize(h.text) for h in material.hypotheses}
        self.alerts = {a for c in material.claims for e in c.excerpts if (a := _alert_of(c, e, _scope(e)))}
        self._claims: dict[str, ClaimPrep] = {}
        self._flats: dict[str, str] = {}
        self._indexes: dict[str, FactIndex] = {}

    def claim(self, claim_id: str) -> ClaimPrep:
        prep = self._claims.get(claim_id)
        if prep is None:
            prep = self._claims[claim_id] = self._prepare(self.material.claims_by_id[claim_id])
        return prep

    def flat(self, text: str) -> str:
        """`normalize(text)`, once per text of the material."""
        found = self._flats.get(text)
        if found is None:
            found = self._flats[text] = normalize(text)
        return found

    def _text_index(self, text: str) -> FactIndex:
        found = self._indexes.get(text)
        if found is None:
            found = self._indexes[text] = FactIndex.of(text, self.flat(text))
        return found

    def claim_index(self, claim_id: str) -> FactIndex:
        """The claim's index (its text's and its excerpts'), without reading the claim for the rules
        when no sentence is bound to it (the token layer looks values up in every claim)."""
        prep = self._claims.get(claim_id)
        if prep is not None:
            return prep.index
        claim = self.material.claims_by_id[claim_id]
        excerpts = claim.excerpts or (Excerpt(claim.text),)
        return FactIndex.union([self._text_index(claim.text), *(self._text_index(e.text) for e in excerpts)])

    def _prepare(self, claim: ClaimFacts) -> ClaimPrep:
        claim_text = self.flat(claim.text)
        found = [n for n, _, _ in self.names.find(claim_text)]
        # a runbook the claim quotes ("for gateway 502s, follow the upstream") names no subject of
        # its findings
        quoted = {
            n
            for e in claim.excerpts
            if _scope(e) == w.KNOWLEDGE
            for n, _, _ in self.names.find(self.flat(e.text))
        }
        findings = [e for e in claim.excerpts if _scope(e) != w.KNOWLEDGE]
        if findings:
            stated = {n for e in findings for n, _, _ in self.names.find(self.flat(e.text))}
            found = [n for n in found if n not in quoted or n in stated]
        claim_services = list(dict.fromkeys(found))
        excerpts = claim.excerpts or (Excerpt(claim.text),)
        units = [self._unit(claim, claim_text, e, claim_services) for e in excerpts]
        flat = [t for t in (claim_text, *(u.text for u in units if claim.excerpts)) if t]
        names = self.names.with_bare(n for t in flat for n, _, _ in self.names.find(t))
        return ClaimPrep(
            units,
            FactIndex.union([self._text_index(claim.text), *(u.index for u in units)]),
            flat,
            names,
            names - (quoted - set(claim_services)) if findings else names,
        )

    def _unit(self, claim: ClaimFacts, claim_text: str, excerpt: Excerpt, claim_services: list[str]) -> Unit:
        flat = self.flat(excerpt.text)
        scope = _scope(excerpt)
        # an excerpt's own service= field is its subject (labels.upstream=order-service is not);
        # a log line's is the service that wrote it, a log pattern's the claim's first service (the
        # service it names, "upstream order-service slow response", is another); else every service
        # it names
        services = {
            self.names.canonical.get(_squash(m.group(1)), m.group(1)) for m in _SERVICE_FIELD.finditer(flat)
        }
        writer = _LOG_WRITER.match(flat) if scope == w.LOG and not services else None
        if writer is not None and self.names.canonical.get(_squash(writer.group(1))):
            services = {self.names.canonical[_squash(writer.group(1))]}
        elif scope == w.LOG and not services and excerpt.raw_path.startswith("$.patterns") and claim_services:
            services = {claim_services[0]}
        services = services or {n for n, _, _ in self.names.find(flat)}
        if not services and not claim.negative and not claim.failed:
            services = set(claim_services)  # a log pattern names no service; its claim does
        services = self.names.with_bare(services)
        index = self._text_index(excerpt.text)

        def ref() -> str:  # read only when the excerpt has no field of its own
            return self.flat(excerpt.ref_text)

        state = _state(claim, flat, ref)
        return Unit(
            claim=claim,
            text=flat,
            claim_text=claim_text,
            tool=excerpt.tool,
            state=state,
            scope=scope,
            alert=_alert_of(claim, excerpt, scope),
            services=frozenset(services),
            severity=_field(_SEVERITY_FIELD, w.REF_SEVERITY, flat, ref),
            index=index,
            subject=_subject(claim, excerpt.text, index),
            pairs=tuple(_role_pairs(flat)),
            narrowed=tuple(m.group(1).strip() for m in _NARROW_FIELD.finditer(flat))
            if state == w.ABSENT
            else (),
        )

    def bound_units(self, claim_ids: Iterable[str]) -> list[Unit]:
        return [u for cid in claim_ids if cid in self.material.claims_by_id for u in self.claim(cid).units]

    def all_units(self) -> list[Unit]:
        return [u for c in self.material.claims for u in self.claim(c.claim_id).units]

    @cached_property
    def known_text(self) -> str:
        """Every allowed claim's text and excerpts, normalised, as one text (for the rare word that
        must be looked up in all of them)."""
        return "\n".join(t for c in self.material.claims for t in self.claim(c.claim_id).flat)


def _alert_of(claim: ClaimFacts, excerpt: Excerpt, scope: str) -> str:
    alert = _ALERT_FIELD.search(excerpt.text)
    if alert is None and scope == w.ALERT and claim.claim_type != ClaimType.NEGATIVE_OBSERVATION:
        alert = _LEADING_NAME.match(excerpt.text)
    return alert.group(1).lower() if alert else ""


_NARROW_FIELD = re.compile(r"(?<![\w.])(?:alert_name|alertname|keyword)\s*=\s*([^;|,]+)")
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


def _state(claim: ClaimFacts, flat: str, ref: Callable[[], str]) -> str:
    if claim.failed:
        return w.UNCHECKED
    if claim.claim_type == ClaimType.NEGATIVE_OBSERVATION:
        return w.ABSENT
    return _field(_STATE_FIELD, _STATE_WORDS, flat, ref) or w.FOUND


def _field(pattern: re.Pattern[str], words: Mapping[str, str], flat: str, ref: Callable[[], str]) -> str:
    """The word of a state= / severity= field: the excerpt's, else its ref text's (`ref` gives it
    normalised, read only when the excerpt has none)."""
    found = pattern.search(flat)
    if found is None or found.group(1) not in words:
        found = pattern.search(ref())
    return words[found.group(1)] if found is not None and found.group(1) in words else ""


def _role_pairs(flat: str) -> Iterable[tuple[str, str]]:
    """(role, value text) of each current= / threshold= / limit= field."""
    for match in _PAIR.finditer(flat):
        key = match.group(1).rsplit(".", 1)[-1]
        for role, keys in p.ROLE_KEYS.items():
            if key in keys:
                yield role, match.group(2)


def compatible(unit: Unit, alert: str | None, service: str | None) -> bool:
    """The unit can speak of this alert and service: it names them, or names none of that kind."""
    if alert is not None and unit.alert and unit.alert != alert:
        return False
    return service is None or not unit.services or service in unit.services


def holds(unit: Unit, names: Iterable[str]) -> bool:
    """Every name is what the unit is about: for a negative query, what it asked for."""
    return all(n == unit.alert or unit.subject.supports(n, "word") for n in names)


def claim_texts(prepared: Prepared, claim_ids: Iterable[str], hypothesis_ids: Iterable[str]) -> list[str]:
    """The normalised texts a sentence is bound to: its claims' texts and excerpts, its hypotheses."""
    texts = [t for cid in claim_ids for t in prepared.claim(cid).flat]
    texts.extend(prepared.hypothesis_flat[h] for h in hypothesis_ids if h in prepared.hypothesis_flat)
    return texts


def holding(selected: list[Unit], named: list[str]) -> list[Unit]:
    """Of the units a value may come from, those that hold the identifiers the clause names
    ("OOMKilled twice": the OOMKilled line's count, not another line's), when any does."""
    holders = [u for u in selected if any(u.index.supports(n, "word") for n in named)]
    return holders or selected


def names_alert(unit: Unit, alert: str) -> bool:
    return unit.alert == alert or (not unit.alert and unit.subject.supports(alert, "word"))
