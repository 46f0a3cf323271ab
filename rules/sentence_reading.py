"""How the sentence check reads one sentence: its quotes, its named entities, and its clauses.

The text is normalised as the answer check does (rules.answer_facts: NFKC, thousands separators,
百分之九十二 = 92%); quoted text is taken out (it is checked verbatim, never read for meaning); every
name (a catalog service or alias, an identifier such as HighCPUUsage or HikariPool-1) is replaced by
a marker so that no word inside a name ("PodRestartsHigh", "order-service") is read as a state,
scope or action; spelled-out numbers become digits. Then the sentence is cut into clauses at
punctuation and at "but", "while", "但", "而"; at "and", "和" only when each side states something of
its own ("A is firing and B has resolved", not "A and B are firing"). A clause names its subjects
(the alerts and services it mentions); a clause that names none speaks of the previous clause's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evigate.rules import sentence_words as words
from evigate.rules.answer_check import QUOTE
from evigate.rules.answer_facts import WORD, cased, spans_of
from evigate.rules.numerals import spelled_as_digits
from evigate.rules.sentence_units import Prepared

_MARKER = re.compile(r"zq([a-j]+)q")
_STRONG = re.compile(
    r"[;；。!?！？]|[,，、]|(?<!\d)[:：]|[:：](?!\d)|\.(?=\s|$)|[()（）\[\]]"
    r"|\b(?:but|while|whereas|although|though|however|yet)\b|但是|但|不过|而且|(?<![进继从因然])而|同时|其中"
)
# "WARN and above", "及以上" join no two statements
# "upstream order-service", "上游 order-service": a service named as another's dependency
_RELATION = re.compile(
    r"(?:\b(?:upstream|downstream)|上游|下游)(?:\s*(?:service|服务))?\s*(?:是|为|is|:)?\s*$"
)
_WEAK = re.compile(
    r"\b(?:and|or)\b(?!\s+(?:above|below|higher|lower|over|under|more|less|later|earlier)\b)"
    r"|和|与|(?<!以)及(?!以[上下])|以及|并且|并|且|或"
)


@dataclass
class Clause:
    text: str  # lowercase, names as markers, digits for spelled numbers
    services: list[tuple[str, int]]  # canonical name, position of its marker
    alerts: list[tuple[str, int]]
    names: list[tuple[str, int]] = field(default_factory=list)  # other identifiers
    inherited: bool = False

    def groups(self) -> list[tuple[str | None, str | None]]:
        """(alert, service) pairs the clause speaks of; [(None, None)] when it names neither."""
        alerts: list[str | None] = [*dict.fromkeys(a for a, _ in self.alerts)] or [None]
        services: list[str | None] = [*dict.fromkeys(s for s, _ in self.services)] or [None]
        return [(a, s) for a in alerts for s in services]

    def groups_near(self, position: int) -> list[tuple[str | None, str | None]]:
        """The groups of the subject named last before `position` (a value's subject)."""
        before = [(p, name, "a") for name, p in self.alerts if p < position]
        before += [(p, name, "s") for name, p in self.services if p < position]
        if self.inherited or not before:
            return self.groups()
        _, name, kind = max(before)
        return [(a, s) for a, s in self.groups() if (a if kind == "a" else s) == name]


@dataclass
class Reading:
    flat: str  # the whole sentence, lowercase, names as markers
    text: str = ""  # as written
    answer: bool | None = None  # a leading yes (True) or no (False)
    quotes: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # identifiers other than services, lowercase
    services: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    clauses: list[Clause] = field(default_factory=list)


def _marker(index: int) -> str:
    return "zq" + "".join(chr(97 + int(d)) for d in str(index)) + "q"


def _index(marker: str) -> int:
    return int("".join(str(ord(ch) - 97) for ch in marker))


def read(text: str, prepared: Prepared) -> Reading:
    flat = cased(text)
    particle = words.YES_NO.match(flat.lower())
    if particle is not None:  # a leading yes / no answers the question: it is read by the yes / no rule
        flat = " " * particle.end() + flat[particle.end() :]
    quotes = [q.strip().lower() for groups in QUOTE.findall(flat) for q in groups if q.strip()]
    flat = QUOTE.sub(' "" ', flat)
    spans: list[tuple[int, int, str, str]] = []  # start, end, kind (s / a / n), lowercase name
    lower = flat.lower()
    for name, start, end in prepared.names.find(lower):
        spans.append((start, end, "s", name))
    for token, kind, start in spans_of(flat):
        if kind != WORD or any(s <= start < e for s, e, _, _ in spans):
            continue
        spans.append((start, start + len(token), "a" if token in prepared.alerts else "n", token))
    spans.sort()
    entities: list[tuple[str, str]] = []
    pieces: list[str] = []
    at = 0
    for start, end, kind, name in spans:
        if start < at:
            continue
        pieces.extend((lower[at:start], f" {_marker(len(entities))} "))
        entities.append((kind, name))
        at = end
    pieces.append(lower[at:])
    masked = spelled_as_digits("".join(pieces))
    reading = Reading(
        flat=masked,
        text=text,
        answer=None if particle is None else particle.group(1) in words.YES,
        quotes=quotes,
        names=list(dict.fromkeys(n for k, n in entities if k == "n")),
        services=list(dict.fromkeys(n for k, n in entities if k == "s")),
        alerts=list(dict.fromkeys(n for k, n in entities if k == "a")),
    )
    previous: Clause | None = None
    for part in _clauses(masked):
        clause = Clause(part, [], [])
        for match in _MARKER.finditer(part):
            kind, name = entities[_index(match.group(1))]
            if kind == "s" and _RELATION.search(part, 0, match.start()):
                clause.names.append((name, match.start()))  # a gateway's upstream is no subject of it
            elif kind == "s":
                clause.services.append((name, match.start()))
            elif kind == "a":
                clause.alerts.append((name, match.start()))
            else:
                clause.names.append((name, match.start()))
        if not clause.services and not clause.alerts and previous is not None:
            # "…, and no OutOfMemoryError logs were found": a clause with names of its own keeps the
            # previous clause's service, not its alerts
            clause.services, clause.inherited = previous.services, True
            clause.alerts = [] if clause.names else previous.alerts
        reading.clauses.append(clause)
        previous = clause
    return reading


def _clauses(text: str) -> list[str]:
    out = []
    for part in _STRONG.split(text):
        if not part.strip():
            continue
        halves = [h for h in _WEAK.split(part) if h.strip()]
        if len(halves) > 1 and all(words.states(h)[0] for h in halves):
            out.extend(halves)
        else:
            out.append(part)
    return out


def plain(clause: str) -> str:
    """A clause without its name markers (for the meaning words)."""
    return _MARKER.sub(" ", clause)
