"""The meaning rules of the sentence check, applied to one sentence against its own bound claims:
subject, state and absence, yes / no, values (numbers, spelled numbers, relative times, roles),
quotes, causal and trend words, severity, quantities and actions (docs/design.md §5.8)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evigate.rules import sentence_phrases as p
from evigate.rules import sentence_types as t
from evigate.rules import sentence_vague as v
from evigate.rules import sentence_words as w
from evigate.rules.answer_check import quote_spans
from evigate.rules.answer_facts import NUMBER, WORD, FactIndex, normalize, spans_of
from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_reading import Clause, Reading, plain
from evigate.rules.sentence_relations import RelationContext, relation_stated
from evigate.rules.sentence_units import (
    Prepared,
    Unit,
    claim_texts,
    compatible,
    holding,
    holds,
    names_alert,
)

_ROLE_BEFORE = 24  # characters between a role word and its value
_ROLE_AFTER = re.compile(r"\s?(?:的\s?)?(?:threshold|阈值|limit|上限)")  # "85% threshold", "85% 的阈值"
_ONCE = re.compile(r"1 ?(?:次|times?)")
_ALERT_WORD = re.compile(r"fir|alert|trigger|触发|告警|报警")
_TIMES = re.compile(r"\d+ ?(?:次|times?)")


class SentenceRules:
    """The meaning rules of one sentence; `out` collects the violations."""

    def __init__(  # noqa: PLR0917 - the sentence, where it is, and what it is bound to
        self,
        prepared: Prepared,
        index: int,
        kind: str,
        reading: Reading,
        claim_ids: list[str],
        hypothesis_ids: list[str],
        hedged: bool,
    ) -> None:
        self.prepared, self.index, self.kind, self.reading = prepared, index, kind, reading
        self.claim_ids, self.hypothesis_ids, self.hedged = claim_ids, hypothesis_ids, hedged
        # a runbook tells what to do, not what is: its excerpts hold facts only for steps (a lookup
        # that found nothing, or could not run, is what is)
        self.units = [
            u
            for u in prepared.bound_units(claim_ids)
            if u.scope != w.KNOWLEDGE or u.state in (w.ABSENT, w.UNCHECKED) or kind == SentenceKind.STEP
        ]
        self.texts = claim_texts(prepared, claim_ids, hypothesis_ids)
        self.hypothesis_texts = [prepared.hypothesis_flat[h] for h in hypothesis_ids]
        self.out: list[t.SentenceViolation] = []

    def fail(self, rule: str, token: str, detail: str = "") -> None:
        message = t.RULES[rule] + (f": {detail}" if detail else "")
        self.out.append(t.SentenceViolation(rule, self.index, " ".join(token.split()), message))

    def run(self) -> list[t.SentenceViolation]:
        self.subject()
        self.quotes()
        self.yes_no()
        for clause in self.reading.clauses:
            self.clause(clause)
        self.kind_wording()
        return list(dict.fromkeys(self.out))

    # --- subject ------------------------------------------------------------------------------

    def _named(self, name: str, service: bool) -> bool:
        for cid in self.claim_ids:
            claim = self.prepared.claim(cid)
            # a step may name what its runbook names; a finding, what the claim's findings name
            names = claim.names if self.kind == SentenceKind.STEP else claim.facts
            if service and name in names:
                return True
            if not service and claim.index.supports(name, WORD):
                return True
        return any(self.prepared.hypothesis_index[h].supports(name, WORD) for h in self.hypothesis_ids)

    def subject(self) -> None:
        missing = set()
        for name in self.reading.services:
            if not self._named(name, service=True):
                missing.add(name)
                self.fail(t.SUBJECT, name, "no bound claim is about it")
        for name in [*self.reading.alerts, *self.reading.names]:
            if not self._named(name, service=False):
                missing.add(name)
                self.fail(t.SUBJECT, name, "no bound claim or excerpt names it")
        if not self.units:
            return
        for clause in self.reading.clauses:
            if clause.inherited:
                continue
            for alert, service in clause.groups():
                if {alert, service} & missing or alert is None or service is None:
                    continue
                if not any(names_alert(u, alert) and compatible(u, alert, service) for u in self.units):
                    pair = " + ".join(n for n in (alert, service) if n)
                    self.fail(t.SUBJECT, pair, "no bound excerpt speaks of these together")

    def _selected(self, groups: Iterable[tuple[str | None, str | None]]) -> list[Unit]:
        groups = list(groups)
        return [u for u in self.units if any(compatible(u, a, s) for a, s in groups)]

    # --- states -------------------------------------------------------------------------------

    def clause(self, clause: Clause) -> None:
        text = plain(clause.text)
        asserted, universal = w.states(w.without_severity(text))
        procedure = self.kind == SentenceKind.STEP or (self.kind == SentenceKind.HYPOTHESIS and self.hedged)
        for state, phrase in asserted:
            if procedure:
                self._said_state(state, phrase)
            elif state == w.ABSENT:
                self._absence(clause, text, phrase)
            elif state == w.UNCHECKED:
                if not any(u.state == w.UNCHECKED for u in self.units):
                    self.fail(t.UNCHECKED, phrase, "no bound call failed")
            elif not universal:
                self._state(clause, state, phrase)
        self.values(clause)
        if not procedure:
            # "X means Y": Y restates the bound claims, or the sentence is a hedged hypothesis
            hedged = self.hedged and (self.kind == SentenceKind.HYPOTHESIS or bool(self.hypothesis_ids))
            if not hedged and (word := v.definition_refused(text, self.texts)) is not None:
                self.fail(t.DEFINITION, word, "no bound claim or excerpt says so")
            self.quantity(clause, text, asserted, universal)
            self.severity(clause, text)
        self.connectives(clause, self.actions(text))

    def _state(self, clause: Clause, state: str, phrase: str) -> None:
        for alert, service in clause.groups():
            selected = self._selected([(alert, service)])
            if (
                state == w.FIRING
                and not _ALERT_WORD.search(phrase)
                and all(u.state == w.FOUND for u in selected)
            ):
                continue  # "the timeouts persist", "仍然在报错": log lines go on, no alert state to flip
            if selected and not any(u.state in w.AGREES[state] for u in selected):
                shown = sorted({u.state for u in selected})
                self.fail(t.STATE, phrase, f"the bound evidence shows {', '.join(shown)}")
                return

    def _said_state(self, state: str, phrase: str) -> None:
        """A step or a hypothesis repeats its runbook's or hypothesis' words; an alert state it names
        is one they name, or one a bound claim shows (its other negations are instructions)."""
        if state in (w.FOUND, w.ABSENT, w.UNCHECKED):
            return
        said = {s for text in self.procedure_texts() for s, _ in w.states(text)[0]}
        if state not in said and not any(
            u.state in w.AGREES[state] for u in self.units if u.scope != w.KNOWLEDGE
        ):
            self.fail(t.STATE, phrase, "neither the runbook, the hypothesis nor a bound claim says so")

    def procedure_texts(self) -> list[str]:
        """The bound runbook claims' texts and excerpts, and the bound hypotheses."""
        runbook = [
            x
            for cid in self.claim_ids
            if self.prepared.material.claims_by_id[cid].runbook
            for x in self.prepared.claim(cid).flat
        ]
        return [*runbook, *self.hypothesis_texts]

    def _absence(self, clause: Clause, text: str, phrase: str) -> None:
        names = [n for n, _ in [*clause.services, *clause.alerts, *clause.names]]
        scopes = w.scopes(text)
        about = [u for u in self.units if u.state == w.ABSENT and holds(u, names)]
        # a query for one alert or keyword found nothing of that, not nothing at all
        narrower = sorted({v for u in about for v in u.narrowed if v not in text and v not in names})
        about = [u for u in about if all(v in text or v in names for v in u.narrowed)]
        if not scopes:
            # nothing at all was found about these subjects: no allowed claim found anything of them
            # (of what else the clause names with them, when it names more: "no evidence matching
            # payment-service OutOfMemoryError" speaks of that error alone)
            also = [n for n, _ in clause.names]
            found = [
                u
                for u in self.prepared.all_units()
                if u.state in w.POSITIVE
                and u.scope != w.KNOWLEDGE
                and any(compatible(u, a, s) for a, s in clause.groups())
                and (u.services or u.alert)
                and all(u.index.supports(n, WORD) for n in also)
            ]
            if found and about:
                self.fail(t.ABSENCE, phrase, f"the session found {found[0].alert or found[0].scope} for it")
                return
        if any(not scopes or u.scope in scopes for u in about):
            return
        if narrower:
            detail = f"the negative claim asked only for {', '.join(narrower)}"
        elif about:
            detail = f"the negative claim is about {', '.join(sorted({u.scope for u in about}))}"
        elif any(u.state == w.UNCHECKED for u in self.units):
            detail = "the call failed: it could not be checked, which is not 'nothing found'"
        else:
            detail = "no bound negative claim of this subject"
        self.fail(t.ABSENCE, phrase, detail)

    def kind_wording(self) -> None:
        said = {s for c in self.reading.clauses for s, _ in w.states(w.without_severity(plain(c.text)))[0]}
        nothing = {w.ABSENT, w.NOT_FIRING, w.NOT_RESOLVED, w.NOT_SILENCED}
        if self.kind == SentenceKind.ABSENCE and not said & nothing:
            self.fail(t.ABSENCE, self.reading.text[:60], "an absence sentence must say nothing was found")
        unchecked_only = bool(self.units) and all(u.state == w.UNCHECKED for u in self.units)
        if (self.kind == SentenceKind.COULD_NOT_CHECK or unchecked_only) and w.UNCHECKED not in said:
            self.fail(t.UNCHECKED, self.reading.text[:60], "a failed call must be reported as not checked")

    def yes_no(self) -> None:
        answer = self.reading.answer
        question = normalize(self.prepared.material.question)
        if answer is None or not question or not self.units:
            return
        word = "yes" if answer else "no"
        if w.asks_healthy(question):
            agree = w.HEALTHY_YES if answer else w.HEALTHY_NO
            if not any(u.state in agree for u in self.units):
                self.fail(t.YES_NO, word, "the question asks whether all is well")
            return
        asked = w.question_state(question)
        state = asked if answer else (w.ABSENT if asked == w.FOUND else w.NEGATED[asked])
        if not any(u.state in w.AGREES[state] for u in self.units):
            self.fail(t.YES_NO, word, f"the question asks whether it is {asked}")

    # --- values -------------------------------------------------------------------------------

    def values(self, clause: Clause) -> None:
        text = clause.text
        for match, low, high in v.vague(text):  # "dozens of errors": a count in the dozens
            units = self._selected(clause.groups()) or self.units
            if (why := v.vague_refused(match.group(), low, high, units, self.texts)) is not None:
                self.fail(t.VAGUE_QUANTITY, match.group(), why)
            text = text[: match.start()] + " " * len(match.group()) + text[match.end() :]
        for match in list(p.RELATIVE_TIME.finditer(text)):
            phrase = re.sub(r"^(?:since|until|from) ", "", match.group().strip())
            if not any(phrase in bound for bound in self.texts):
                self.fail(t.RELATIVE_TIME, match.group())
            text = text[: match.start()] + " " * len(match.group()) + text[match.end() :]
        counted = [(start, end) for _, _, start, end in p.counts(text)]
        indexes = [self.prepared.hypothesis_index[h] for h in self.hypothesis_ids]
        for token, kind, start in spans_of(text):
            if kind == WORD or any(s <= start < e for s, e in counted):
                continue
            selected = holding(self._selected(clause.groups_near(start)), [n for n, _ in clause.names])
            if (
                any(u.index.supports(token, kind) for u in selected)
                or any(i.supports(token, kind) for i in indexes)
                or (_ONCE.fullmatch(token) and any(u.scope == w.LOG for u in selected))  # a log line is once
            ):
                if kind == NUMBER:
                    self._role(text, start, token, selected)
                continue
            if any(u.index.supports(token, kind) for u in self.units):
                self.fail(t.VALUE, token, "it belongs to another subject's excerpt")
            else:
                self.fail(t.VALUE, token, "no bound excerpt holds it")

    def _role(self, text: str, start: int, token: str, selected: list[Unit]) -> None:
        role = None
        window = text[max(0, start - _ROLE_BEFORE) : start]
        for match in p.ROLE_WORDS.finditer(window):
            if not re.search(r"\d", window[match.end() :]):
                role = match.lastgroup
        after = _ROLE_AFTER.match(text, start + len(token.split(maxsplit=1)[0]) + (1 if "%" in token else 0))
        if after is not None:
            role = p.LIMIT if ("limit" in after.group() or "上限" in after.group()) else p.THRESHOLD
        if role is None and _TIMES.fullmatch(token):
            role = p.CURRENT  # "restarted 3 times": how often it happened, never its threshold
        if role is None:
            return
        given = {r for u in selected for r, value in u.pairs if FactIndex([value]).supports(token, NUMBER)}
        if given and role not in given:
            self.fail(t.ROLE, token, f"the excerpt gives it as {', '.join(sorted(given))}, not {role}")

    def quotes(self) -> None:
        for quote in self.reading.quotes:
            if not all(any(piece in bound for bound in self.texts) for piece in quote_spans(quote)):
                self.fail(t.QUOTE, quote)

    # --- connectives, severity, quantities, actions -------------------------------------------

    def connectives(self, clause: Clause, text: str) -> None:
        plain_text = plain(text)
        context = RelationContext(self.units, self.kind, self.hedged, bool(self.hypothesis_ids))
        hedged = self.hedged and (self.kind == SentenceKind.HYPOTHESIS or bool(self.hypothesis_ids))
        for match in w.IMPACT.finditer(plain_text):
            if not hedged and not any(match.group() in bound for bound in self.texts):
                self.fail(t.CAUSAL, match.group(), "a consequence that no bound claim observed")
                break
        for match in w.causal_words(plain_text):
            if w.AFFECTED.fullmatch(match.group()) and self._own_subject(clause):
                continue
            if not relation_stated(context, clause, plain_text, match, text):
                self.fail(t.CAUSAL, match.group(), "no bound claim states this relation")
                break
        for pattern in (w.TREND_UP, w.TREND_DOWN):
            trend = pattern.search(plain_text)
            if trend is not None and not relation_stated(context, clause, plain_text, trend, text):
                self.fail(t.TREND, trend.group(), "no bound claim states this trend")

    def _own_subject(self, clause: Clause) -> bool:
        """ "payment-service is affected by its HighCPUUsage alert", "the affected service is X": the
        clause names services, each the subject of a bound unit, and no consequence of its own."""
        services = {n for n, _ in clause.services}
        return bool(services) and all(any(n in u.services for u in self.units) for n in services)

    def severity(self, clause: Clause, text: str) -> None:
        for level, word in w.severities(text):
            given = {u.severity for u in self._selected(clause.groups()) if u.severity}
            ok = bool(given) and given <= {w.LOW} if level == w.LOW else level in given
            if not ok:
                shown = ", ".join(sorted(given)) or "no severity"
                self.fail(t.SEVERITY, word, f"the bound refs give {shown}")

    def quantity(self, clause: Clause, text: str, asserted: list[tuple[str, str]], universal: bool) -> None:
        states = [s for s, _ in asserted if s not in (w.FOUND, w.ABSENT, w.UNCHECKED)]
        pool = self._pool(clause, w.ALERT)
        every = p.ALL_WORDS.search(text)
        if (universal or every) and states and pool:
            wrong = sorted({u.alert or u.claim.claim_id for u in pool if u.state not in w.AGREES[states[0]]})
            if wrong:
                word = asserted[0][1] if universal or every is None else every.group()
                self.fail(t.QUANTITY, word, f"not true of {', '.join(wrong)}")
        things = p.ALL_OF_THINGS.search(text)
        if things is not None and not any(p.ALL_WORDS.search(x) for x in self.texts):
            self.fail(t.QUANTITY, things.group(), "no bound claim speaks of all of them")
        both = p.BOTH.search(text)
        if both is not None and pool and len(self._items(pool, states)) != 2:
            self.fail(t.QUANTITY, both.group(), f"the claims show {len(self._items(pool, states))}")
        for number, noun, start, end in p.counts(text):
            self._count(clause, text, (number, noun, start, end), states)
        for match in p.SEVERAL.finditer(text):
            noun = match.group(1) or match.group(2)
            scope = p.noun_scope(noun)
            if scope == w.SERVICE:
                items = {n for n, _ in clause.services} | {s for u in self.units for s in u.services}
            else:
                items = self._items(self._pool(clause, scope or w.ALERT), states)
            if len(items) < 2 and not any(
                p.counts_of(u.text) - {"0", "1"} for u in self.units if u.scope == scope
            ):
                self.fail(t.QUANTITY, match.group(), f"the claims show {len(items)}")

    def _pool(self, clause: Clause, scope: str) -> list[Unit]:
        """The allowed items a quantifier speaks of: every allowed excerpt of that scope about the
        clause's subjects that found something, whatever the sentence is bound to."""
        groups = clause.groups()
        return [
            u
            for u in self.prepared.all_units()
            if u.scope == scope and u.state in w.POSITIVE and any(compatible(u, a, s) for a, s in groups)
        ]

    @staticmethod
    def _items(pool: list[Unit], states: list[str]) -> set[str]:
        return {u.alert or u.text for u in pool if not states or u.state in w.AGREES[states[0]]}

    def _count(self, clause: Clause, text: str, count: tuple[int, str, int, int], states: list[str]) -> None:
        number, noun, start, end = count
        scope, phrase = p.noun_scope(noun), text[start:end]
        if any(str(number) in p.counts_of(u.text) for u in self.units if scope in (None, u.scope)):
            return  # the excerpt says how many (total=3, known_services=8)
        if scope == w.SERVICE:
            items = {n for n, _ in clause.services} | {s for u in self.units for s in u.services}
            listed = len({n for n, _ in clause.services})
        elif scope is not None:
            items = self._items(self._pool(clause, scope), states)
            listed = len({n for n, _ in clause.alerts}) if scope == w.ALERT else 0
        else:
            self.fail(t.QUANTITY, phrase, "no bound excerpt gives this count")
            return
        before = text[max(0, start - 12) : start]
        if number in (len(items), listed) or (p.TOP.search(before) and number <= len(items)):
            return
        if number == 1 and items and not p.ONLY.search(before):
            return
        self.fail(t.QUANTITY, phrase, f"the claims show {len(items)}")

    def actions(self, text: str) -> str:
        """An instruction comes from a bound runbook claim or hypothesis (a reported restart is a
        finding, held by the value and state rules). Returns the text without its action words."""
        procedures = self.procedure_texts()
        for name, word, instruction, span in p.actions(text):
            if instruction and not any(p.ACTIONS[name].search(x) for x in procedures):
                self.fail(t.ACTION, word, "no bound runbook claim or hypothesis gives it")
            text = text[: span[0]] + " " * (span[1] - span[0]) + text[span[1] :]
        return text
