"""The offline Composer's sentences: a structured answer written from the sentence check's material
(the allowed claims with their verified excerpts), as an on-call engineer reports.

1. One headline that answers the question: yes / no with the key value for a yes / no question,
   else the one to three most severe findings.
2. Short findings, one per excerpt, each bound to its claim.
3. What was not found (absences), then what could not be checked, as a list.
4. The runbook's steps, one numbered list.
5. The missing information, as a list.

About eight sentences besides the lists. Every sentence is checked as it is written (rules.
sentence_check) against its own claims: one the check refuses is written more plainly (the headline
without its yes / no) or left out, so the answer passes by construction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evigate.rules import answer_check, sentence_check
from evigate.rules.enums import SentenceKind, ToolName, Verdict
from evigate.rules.sentence_types import FIXED_LINES, ClaimFacts, Sentence, SentenceMaterial
from evigate.server.agents.offline import answer_length, readable
from evigate.server.agents.offline.asked import asked_terms, asks_for, asks_healthy, is_yes_no, yes_or_no
from evigate.server.agents.offline.facts import has_scoped_negative_phrase, is_overstatement
from evigate.server.agents.offline.readable_fields import hedge, step_text

# Length by relevance: each claim's most telling sentence, then its further ones while short; the
# headline, findings and absences together at most MAX_PROSE (the lists aside: steps, what could not
# be checked), unless the question asks for a list.
MAX_PROSE = 8
MAX_FINDINGS = 8
MAX_EXTRA = 4  # sentences beyond one per claim
MAX_ABSENCES = 2
MAX_RUNBOOKS = 2
MAX_STEPS = 8
HEADLINE_FINDINGS = 3
MAX_LOG_LINES = 5  # quoted log records per claim

ASKED_BONUS = 15
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\b")  # an alert's CamelCase name
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T][\d:.,]+Z?\s*")
_SERVICE_OF = re.compile(r"^For ([\w.-]+),|^([\w.-]+) 的|\bof ([\w.-]+): |^The [\w:.]+ of ([\w.-]+) is ")
_PATTERN_SERVICE = re.compile(r" \| service=([\w.-]+)$")
_YES = {"zh": ("是的，", "没有，"), "en": ("Yes. ", "No. ")}
_NOT_WELL = {"zh": "不是，", "en": "No. "}  # the no to "is it healthy?" ("一切正常吗？")
_VERDICT_LINES: dict[str, str] = {Verdict.LOW_CONFID: "low_confidence", Verdict.REJECT: "rejected"}
_NEGATIVE_GENERIC = {"zh": "当前查询未检索到匹配证据。", "en": "This query found no matching evidence."}


@dataclass(frozen=True)
class _Finding:
    claim: ClaimFacts
    phrase: readable.Phrase
    state: str  # firing | resolved | found


def write(composer_input: Mapping[str, Any], material: SentenceMaterial) -> list[Sentence]:
    """The answer's sentences, each passing the sentence check against `material`."""
    language = material.language
    findings, runbooks, plain = _findings(material, language)
    absences = [c for c in material.claims if c.negative][:MAX_ABSENCES]
    unchecked = [c for c in material.claims if c.failed]
    out: list[Sentence | None] = []

    terms = asked_terms(material.question)
    # the most severe first; what the question names (a log term, a signal) before the rest
    ranked = sorted(
        findings, key=lambda f: -(f.phrase.weight + ASKED_BONUS * asks_for(f.phrase.sentence, terms))
    )
    headline_of = _headline_findings(ranked)
    verdict = str(composer_input.get("verdict", "")).upper()
    if verdict in _VERDICT_LINES:  # said before anything else: how far the answer can be trusted
        out.append(_fixed(_VERDICT_LINES[verdict], language))
    variants = _headline(headline_of, absences, unchecked, plain, material)
    if not variants and runbooks:  # a question for a procedure: the runbook answers it
        claim, phrase = runbooks[0]
        variants = [Sentence(SentenceKind.HEADLINE, phrase.sentence, (claim.claim_id,))]
    headline = next((v for v in variants if _passes(v, material)), None)
    out.append(headline)
    told = {headline_of[0].phrase.sentence} if len(headline_of) == 1 else set()
    if headline is not None:
        told.add(headline.text)
        told.update(headline.text.removeprefix(p) for p in _YES[language])  # the line it says yes / no to
        if headline_of and headline.text in (headline_of[0].phrase.sentence, headline_of[0].phrase.fallback):
            told.add(headline_of[0].phrase.sentence)
    said_absences: list[Sentence | None] = []
    for claim in absences:
        text = _absence_text(claim, language)
        if text not in told:
            said_absences.append(
                _first_passing(SentenceKind.ABSENCE, [text, _NEGATIVE_GENERIC[language]], claim, material)
            )
    found = _finding_sentences(ranked, plain, told, material)
    if not answer_length.asks_for_list(material.question):
        room = MAX_PROSE - (headline is not None) - sum(a is not None for a in said_absences)
        found = answer_length.most_severe(found, max(room, 1), terms)
    out.extend(found)
    out.extend(said_absences)
    out.append(_fixed("scope_note", language) if absences else None)
    out.extend(_lists(unchecked, runbooks, headline, told, material))
    kept = _passing(out, material)
    if not any(not s.fixed_line for s in kept):  # nothing checked is left to say
        kept = [s for s in kept if s.fixed_line in _VERDICT_LINES.values()]
        kept.append(_fixed("nothing_confirmed", language))
    return kept


def _finding_sentences(
    ranked: list[_Finding], plain: list[ClaimFacts], told: set[str], material: SentenceMaterial
) -> list[Sentence]:
    """The findings after the headline, most severe first: each claim's first sentence always, its
    further ones while the answer stays short; a claim no excerpt of which has a sentence is told
    by its own text, or else by its excerpts quoted."""
    firsts: list[Sentence] = []
    extras: list[Sentence] = []
    seen: set[str] = set()
    for finding in ranked:
        variants = [finding.phrase.sentence, finding.phrase.fallback]
        if variants[0] in told:
            seen.add(finding.claim.claim_id)
            continue
        chosen = _first_passing(SentenceKind.FINDING, variants, finding.claim, material)
        if chosen is None:
            continue
        told.add(finding.phrase.sentence)
        (extras if finding.claim.claim_id in seen else firsts).append(chosen)
        seen.add(finding.claim.claim_id)
    for claim in plain:
        variants = [claim.text.strip()]
        for excerpt in claim.excerpts:
            found = readable.generic(excerpt, material.language)
            if found is not None:
                variants.extend([found.sentence, found.fallback])
        chosen = _first_passing(SentenceKind.FINDING, variants, claim, material)
        if chosen is not None and chosen.text not in told:
            told.add(chosen.text)
            firsts.append(chosen)
    room = max(MAX_FINDINGS - len(firsts), MAX_EXTRA)
    ordered = list(firsts)
    for extra in extras[:room]:  # in the order of severity, a claim's extra sentences after its first
        owner = extra.claim_ids[0]
        mine = [i for i, s in enumerate(ordered) if owner in s.claim_ids]
        ordered.insert(mine[-1] + 1 if mine else len(ordered), extra)
    return ordered


def _first_passing(
    kind: str, variants: list[str], claim: ClaimFacts, material: SentenceMaterial
) -> Sentence | None:
    for text in dict.fromkeys(v for v in variants if v):
        sentence = _sentence(kind, text, claim)
        if _passes(sentence, material):
            return sentence
    return None


def _lists(
    unchecked: list[ClaimFacts],
    runbooks: list[tuple[ClaimFacts, readable.Phrase]],
    headline: Sentence | None,
    told: set[str],
    material: SentenceMaterial,
) -> list[Sentence | None]:
    """The lists after the findings: what could not be checked, the hypotheses, the steps."""
    language, zh = material.language, material.language == "zh"
    out: list[Sentence | None] = []
    if unchecked:
        out.append(_fixed("missing_header", language))
        for claim in unchecked:  # a failed call and the missing item that names it are one line
            text = _unchecked_text(claim, zh)
            if text not in told:
                told.add(text)
                out.append(_sentence(SentenceKind.COULD_NOT_CHECK, text, claim))
    hypotheses = [h for h in material.hypotheses if h.text.strip() and not is_overstatement(h.text)]
    if hypotheses:
        out.append(_fixed("hypotheses_header", language))
        for h in hypotheses:
            text = h.text.strip()
            hedged = text if answer_check.is_hedged(text) else hedge(text, zh)
            out.append(Sentence(SentenceKind.HYPOTHESIS, hedged, (), (h.hypothesis_id,)))
    steps = [(claim, step) for claim, phrase in runbooks[:MAX_RUNBOOKS] for step in phrase.steps]
    if runbooks and runbooks[0][1].intro and runbooks[0][1].intro not in told:
        out.append(_first_passing(SentenceKind.FINDING, [runbooks[0][1].intro], runbooks[0][0], material))
    if steps and not (headline is not None and headline.text == runbooks[0][1].sentence):
        out.append(_fixed("steps_header", language))
    if steps:
        out.extend(
            _sentence(SentenceKind.STEP, step_text(step, language), claim)
            for claim, step in steps[:MAX_STEPS]
        )

    return out


def _headline_findings(ranked: list[_Finding]) -> list[_Finding]:
    """The one to three most severe findings, with at most one quoted log line; a runbook or an
    excerpt told only by its fields heads the answer only when nothing else can."""
    out: list[_Finding] = []
    telling = [f for f in ranked if f.phrase.weight > readable.OTHER]
    if not telling:
        return ranked[:1]
    for finding in telling:
        if finding.phrase.log_line and any(f.phrase.log_line for f in out):
            continue
        out.append(finding)
        if len(out) == HEADLINE_FINDINGS:
            break
    return out


def _findings(
    material: SentenceMaterial, language: str
) -> tuple[list[_Finding], list[tuple[ClaimFacts, readable.Phrase]], list[ClaimFacts]]:
    """The readable findings of the positive claims, their runbooks, and the claims no excerpt of
    which could be phrased (told by their own text)."""
    findings: list[_Finding] = []
    runbooks: list[tuple[ClaimFacts, readable.Phrase]] = []
    plain: list[ClaimFacts] = []
    terms = asked_terms(material.question)
    for claim in material.claims:
        if claim.negative or claim.failed:
            continue
        service = _service(claim)
        phrased, lines = False, 0
        unphrased = []
        said_lines: set[str] = set()
        for excerpt in claim.excerpts:
            # a template names the service it was asked for (a merged claim holds several)
            templated = _PATTERN_SERVICE.search(excerpt.text)
            phrase = readable.phrase(excerpt, templated.group(1) if templated else service, language)
            if phrase is None:
                if not excerpt.raw_path.startswith("$.no_evidence"):
                    unphrased.append(excerpt)
                continue
            phrased = True
            if phrase.log_line:  # a line said once, whatever its time; the asked-for lines always
                message = _STAMP.sub("", excerpt.text.split(" | ", 1)[0]).strip()
                if message in said_lines:
                    continue
                said_lines.add(message)
                asked = asks_for(phrase.sentence, terms)
                lines += not asked
                if not asked and lines > MAX_LOG_LINES:
                    continue
            if phrase.steps or phrase.title:
                if not any(p.title == phrase.title and p.source == phrase.source for _, p in runbooks):
                    runbooks.append((claim, phrase))
                continue
            state = "firing" if phrase.weight >= readable.FIRING else "found"
            state = "resolved" if phrase.weight == readable.RESOLVED else state
            findings.append(_Finding(claim, phrase, state))
        if not phrased and claim.text.strip() and not is_overstatement(claim.text):
            plain.append(claim)
        elif phrased:  # an excerpt of a shape without a sentence of its own: its fields, quoted
            findings.extend(
                _Finding(claim, found, "found")
                for excerpt in unphrased
                if (found := readable.generic(excerpt, language)) is not None
            )
    # the most relevant runbook (the first retrieved) gives the steps, with the other sections of
    # its document; another document's section is told when it has no steps of its own. The
    # runbook for the steps: one whose title names what the question or a firing alert names, else
    # the one its claim names, else the first retrieved when its claim speaks of the knowledge base
    # alone (a question for a procedure)
    names = terms | {
        w.lower()
        for f in findings
        if f.phrase.weight >= readable.FIRING
        for w in _NAME.findall(f.phrase.short)
    }
    fitting = [(c, p) for c, p in runbooks if p.steps and asks_for(p.title, names)]
    named = [(c, p) for c, p in runbooks if p.title and p.title in c.text]
    alone = [(c, p) for c, p in runbooks if all(e.tool == ToolName.LOOKUP_KNOWLEDGE for e in c.excerpts)]
    chosen = fitting or named or alone
    top = chosen[0][1].source if chosen else ""
    for claim, phrase in runbooks:  # another document only when the claim names it
        if not phrase.steps and (phrase.source == top or phrase.title in claim.text):
            findings.append(_Finding(claim, phrase, "found"))
    runbooks = [(c, p) for c, p in runbooks if p.steps and top and p.source == top]
    return findings, runbooks, plain


def _headline(
    top: list[_Finding],
    absences: list[ClaimFacts],
    unchecked: list[ClaimFacts],
    plain: list[ClaimFacts],
    material: SentenceMaterial,
) -> list[Sentence]:
    """The first line, in the variants to try (the first the check accepts is kept)."""
    language, zh = material.language, material.language == "zh"
    yes_no = is_yes_no(material.question)
    if top:
        claims = tuple(dict.fromkeys(f.claim.claim_id for f in top))
        if len(top) == 1:
            body = top[0].phrase.sentence
        else:
            quoted = [readable.fields(e.text)[1] for f in top for e in f.claim.excerpts]  # of several
            services = {_service(f.claim) for f in top} | {q["service"] for q in quoted if q.get("service")}
            owner = next(iter(services)) if len(services) == 1 else ""
            joined = ("；" if zh else "; ").join(f.phrase.short for f in top)
            joined = joined[:1].upper() + joined[1:] if not owner else joined
            body = (
                f"{owner}： {joined}。" if zh and owner else f"{owner}: {joined}." if owner else f"{joined}."
            )
        problem = any(f.phrase.weight >= readable.LOG_WARN for f in top)
        answer = yes_or_no({f.state for f in top}, problem, material.question) if yes_no else None
        # "is it healthy?" ("一切正常吗？") over a problem: not well
        no = _NOT_WELL[language] if asks_healthy(material.question) else _YES[language][1]
        variants = [body] if answer is None else [(_YES[language][0] if answer else no) + body, body]
        out = [Sentence(SentenceKind.HEADLINE, v, claims) for v in variants]
        first = top[0]
        out.extend(
            Sentence(SentenceKind.HEADLINE, v, (first.claim.claim_id,))
            for v in (first.phrase.sentence, first.phrase.fallback)
            if v and v != body
        )
        return out
    if absences:
        text = _absence_text(absences[0], language)
        # an absence answers "is there …?" with no; "is it healthy?" it leaves unanswered
        healthy = asks_healthy(material.question)
        variants = [_YES[language][1] + text, text] if yes_no and not healthy else [text]
        return [Sentence(SentenceKind.ABSENCE, v, (absences[0].claim_id,)) for v in variants]
    if plain:
        texts = [plain[0].text.strip()]
        for excerpt in plain[0].excerpts:
            found = readable.generic(excerpt, language)
            texts.extend([found.sentence, found.fallback] if found is not None else [])
        return [Sentence(SentenceKind.HEADLINE, v, (plain[0].claim_id,)) for v in dict.fromkeys(texts) if v]
    if unchecked:
        text = _unchecked_text(unchecked[0], zh)
        return [Sentence(SentenceKind.COULD_NOT_CHECK, text, (unchecked[0].claim_id,))]
    return []


def _passes(sentence: Sentence, material: SentenceMaterial) -> bool:
    return not any(sentence_check.check([sentence], material).sentences)


def _passing(candidates: list[Sentence | None], material: SentenceMaterial) -> list[Sentence]:
    """The sentences the check accepts, each alone (a fixed line always), lists never empty."""
    kept = [s for s in candidates if s is not None and (s.fixed_line or _passes(s, material))]
    if not any(s.kind == SentenceKind.ABSENCE for s in kept):
        kept = [s for s in kept if s.fixed_line != "scope_note"]
    return _drop_orphan_headers(kept)


def _drop_orphan_headers(sentences: list[Sentence]) -> list[Sentence]:
    """A list header with nothing under it is left out."""
    out: list[Sentence] = []
    for i, sentence in enumerate(sentences):
        listed = sentence.fixed_line.endswith("_header")
        nxt = sentences[i + 1] if i + 1 < len(sentences) else None
        if listed and (nxt is None or nxt.fixed_line):
            continue
        out.append(sentence)
    return out


def _sentence(kind: str, text: str, claim: ClaimFacts) -> Sentence:
    return Sentence(kind, text, (claim.claim_id,))


def _fixed(line: str, language: str) -> Sentence:
    texts = FIXED_LINES[line]
    return Sentence(SentenceKind.NOTE, texts.get(language, texts["en"]), fixed_line=line)


def _service(claim: ClaimFacts) -> str:
    for excerpt in claim.excerpts:
        _, found = readable.fields(excerpt.text)
        if found.get("service"):
            return found["service"]
    match = _SERVICE_OF.search(claim.text.strip())
    return next((g for g in match.groups() if g), "") if match else ""


def _absence_text(claim: ClaimFacts, language: str) -> str:
    text = claim.text.strip()
    if not has_scoped_negative_phrase(text) or is_overstatement(text):
        return _NEGATIVE_GENERIC[language]
    return text


def _unchecked_text(claim: ClaimFacts, zh: bool) -> str:
    if claim.excerpts and readable.failed_call(claim.excerpts[0].text, zh) != claim.excerpts[0].text.strip():
        return readable.failed_call(claim.excerpts[0].text, zh)
    return claim.text.strip()


def claim_ids(material: SentenceMaterial) -> list[str]:
    """The ids the citation markers number, in order."""
    return [c.claim_id for c in material.claims]
