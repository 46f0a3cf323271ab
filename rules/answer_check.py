"""The answer check: every fact the user is shown must come from the material the Verifier allowed.

The Gatekeeper checks the claims and the code constraints check the claims' numbers, but the
Composer writes free text. This check runs on that text (user_facing_answer, answer_summary and each
recommended action), after the answer guard and before anything is stored or sent:

- every number (with its unit or %), identifier (service, pod, host, IP, class or function name,
  error code, exception class, ticket-like id, path, URL, date, time) and quoted string must occur
  in the allowed material: the allowed claims and their verified excerpts, the question, what the
  session's tools were asked and the errors they returned, and the allowed hypotheses — a fact found
  only in a hypothesis may be stated only in a sentence that marks it unconfirmed;
- a root cause ("根因是…", "the root cause is…") is stated only where an allowed root_cause claim
  says it, or hedged where a hypothesis says it; saying that no root cause could be determined is
  always allowed;
- an empty answer, an answer in the wrong language, an answer that repeats the prompt's own
  placeholders or instructions, and one that speaks of the pipeline itself ("supported by the
  executor output", "claim-1", "the Gatekeeper severity") instead of the findings, and one that
  only repeats the question, fail.

Comparison shares the Gatekeeper's tokeniser (rules.text) after one normalisation: NFKC (full-width
forms become half-width), lowercase, thousands separators dropped; numbers compare by value with
92% = 0.92, and durations by their length (30000ms = 30 s).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.rules.answer_facts import DATE, NUMBER, TIME, FactIndex, cased, facts_of, normalize
from evigate.rules.text import tokenize

EMPTY = "answer.empty"
WRONG_LANGUAGE = "answer.wrong_language"
PROMPT_ECHO = "answer.prompt_echo"
PLACEHOLDER = "answer.placeholder"
UNSUPPORTED_NUMBER = "answer.unsupported_number"
UNSUPPORTED_IDENTIFIER = "answer.unsupported_identifier"
UNSUPPORTED_QUOTE = "answer.unsupported_quote"
UNSUPPORTED_ROOT_CAUSE = "answer.unsupported_root_cause"
UNMARKED_HYPOTHESIS = "answer.unmarked_hypothesis"
UNSUPPORTED_ABSENCE = "answer.unsupported_absence"
PIPELINE_TALK = "answer.pipeline_talk"
QUESTION_ECHO = "answer.question_echo"

# rule id → what it means; the table that the docs and the trace show.
RULES: dict[str, str] = {
    EMPTY: "the answer shown to the user is empty",
    WRONG_LANGUAGE: "the answer is not written in the user's language",
    PROMPT_ECHO: "the answer repeats the prompt's own instructions or example text",
    PLACEHOLDER: "the answer contains a template placeholder",
    UNSUPPORTED_NUMBER: "a number that no allowed claim, verified excerpt or the question holds",
    UNSUPPORTED_IDENTIFIER: "an identifier that no allowed claim, verified excerpt or the question holds",
    UNSUPPORTED_QUOTE: "a quoted string that occurs in no allowed material",
    UNSUPPORTED_ROOT_CAUSE: "a root cause that no allowed root_cause claim or hypothesis states",
    UNMARKED_HYPOTHESIS: "a hypothesis stated as fact (it must be marked unconfirmed)",
    UNSUPPORTED_ABSENCE: "says nothing was found, in words no allowed claim or excerpt uses",
    PIPELINE_TALK: "the answer speaks of the diagnosis pipeline's stages or fields, not of the findings",
    QUESTION_ECHO: "the answer only repeats (part of) the question",
}

TEXT_FIELDS = ("user_facing_answer", "answer_summary")
ACTION_FIELDS = ("action_text", "reason")


@dataclass(frozen=True)
class AnswerMaterial:
    """What an answer may say. `facts`: allowed claim texts, their verified excerpts, the question
    and the session's tool facts (tool names, errors). `hypotheses`: allowed hypothesis
    texts. `root_causes`: texts of allowed claims of type root_cause. `forbidden`: the prompt's
    placeholders and instruction sentences, which an answer must not repeat."""

    facts: tuple[str, ...]
    hypotheses: tuple[str, ...] = ()
    root_causes: tuple[str, ...] = ()
    language: str = "zh"
    forbidden: tuple[str, ...] = ()
    question: str = ""  # also among the facts; kept apart so an answer that only echoes it fails


@dataclass(frozen=True)
class Violation:
    rule_id: str
    field: str  # user_facing_answer, answer_summary, recommended_actions[0].action_text
    token: str  # the offending token, quote or sentence
    message: str

    def to_seed(self) -> dict[str, str]:
        return {"rule_id": self.rule_id, "field": self.field, "token": self.token, "message": self.message}


@dataclass(frozen=True)
class AnswerCheckResult:
    violations: tuple[Violation, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_seed(self) -> list[dict[str, str]]:
        return [v.to_seed() for v in self.violations]


def check(composer_output: Mapping[str, Any], material: AnswerMaterial) -> AnswerCheckResult:
    """Every violation of `composer_output` against `material` (adversarial input never raises)."""
    facts = FactIndex(material.facts)
    hypotheses = FactIndex(material.hypotheses)
    forbidden = [p for p in (normalize(f).strip() for f in material.forbidden) if len(p) >= 8]
    out: list[Violation] = []
    answer = composer_output.get("user_facing_answer")
    out.extend(answer_rules(answer if isinstance(answer, str) else "", material))
    for where, text in _texts(composer_output):
        out.extend(_check_text(where, text, facts, hypotheses, material, forbidden))
    return AnswerCheckResult(tuple(dict.fromkeys(out)))


def answer_rules(answer: str, material: AnswerMaterial) -> list[Violation]:
    """The rules of the answer as a whole: empty, in the wrong language, or only the question."""
    if not _meaningful(answer):
        return [Violation(EMPTY, "user_facing_answer", "", RULES[EMPTY])]
    if not _in_language(answer, material.language):
        return [Violation(WRONG_LANGUAGE, "user_facing_answer", material.language, RULES[WRONG_LANGUAGE])]
    if material.question and _core(answer) in _core(material.question):
        return [Violation(QUESTION_ECHO, "user_facing_answer", answer.strip()[:80], RULES[QUESTION_ECHO])]
    return []


def check_texts(
    texts: Sequence[str], material: AnswerMaterial, facts: FactIndex | None = None
) -> list[AnswerCheckResult]:
    """`check_text` of each text, with the material prepared once (`facts`: the index of
    `material.facts`, when the caller has built it already)."""
    facts = facts if facts is not None else FactIndex(material.facts)
    hypotheses = FactIndex(material.hypotheses)
    return [
        AnswerCheckResult(tuple(dict.fromkeys(_check_text("text", t, facts, hypotheses, material, ()))))
        for t in texts
    ]


def prompt_echoes(text: str, forbidden: Sequence[str]) -> list[str]:
    """The phrases of `forbidden` (a prompt's instructions and placeholders, normalised, 8+
    characters) that `text` repeats: the echo rule alone, for a text checked by other rules."""
    flat = normalize(text)
    return [p for p in dict.fromkeys(normalize(f).strip() for f in forbidden) if len(p) >= 8 and p in flat]


def is_hedged(text: str) -> bool:
    """Whether a text marks what it says as unconfirmed ("可能", "待验证", "may", "unconfirmed")."""
    return _HEDGE.search(text) is not None


def check_text(text: str, material: AnswerMaterial, where: str = "text") -> AnswerCheckResult:
    """The fact rules alone on one text (not the empty / language rules): used to keep only the
    missing-info and action items whose every fact the material holds."""
    facts, hypotheses = FactIndex(material.facts), FactIndex(material.hypotheses)
    return AnswerCheckResult(tuple(dict.fromkeys(_check_text(where, text, facts, hypotheses, material, ()))))


def _texts(output: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    for name in TEXT_FIELDS:
        value = output.get(name)
        if isinstance(value, str):
            yield name, value
    actions = output.get("recommended_actions")
    if isinstance(actions, list):
        for index, action in enumerate(actions):
            if isinstance(action, Mapping):
                for name in ACTION_FIELDS:
                    value = action.get(name)
                    if isinstance(value, str):
                        yield f"recommended_actions[{index}].{name}", value


def placeholders(text: str) -> list[str]:
    """Template placeholders in a text ("<service>", "{{value}}", "TODO"), normalised as the check
    compares them: what a model copies from a prompt's example, never data of its own."""
    return _PLACEHOLDER.findall(normalize(text))


def _check_text(  # noqa: PLR0917 - the text, where it is, and the material in its three views
    where: str,
    text: str,
    facts: FactIndex,
    hypotheses: FactIndex,
    material: AnswerMaterial,
    forbidden: Sequence[str],
) -> list[Violation]:
    out: list[Violation] = []
    flat = normalize(text)
    for phrase in forbidden:
        if phrase in flat:
            out.append(Violation(PROMPT_ECHO, where, phrase, RULES[PROMPT_ECHO]))
    for placeholder in _PLACEHOLDER.findall(flat):
        if facts.quotes(placeholder):  # "<init>" of a quoted stack frame is data, not a template
            continue
        out.append(Violation(PLACEHOLDER, where, placeholder, RULES[PLACEHOLDER]))
    # "found nothing" is a claim of its own: a negative observation (whose text says so, in its own
    # words) supports it, and so does material using those very words ("user not found" in a log
    # line); positive findings alone never do ("查询未检索到 HighCPUUsage 告警" over a firing alert)
    absences = list(dict.fromkeys(m.group() for m in _ABSENCE.finditer(flat)))
    if absences and not any(_ABSENCE.search(f) for f in facts.flat):
        out.extend(Violation(UNSUPPORTED_ABSENCE, where, a, RULES[UNSUPPORTED_ABSENCE]) for a in absences)
    # the pipeline's own words; a service or log line of the material may hold one ("task-executor")
    for term in dict.fromkeys(m.group() for m in _PIPELINE_TALK.finditer(flat)):
        if not facts.quotes(term):
            out.append(Violation(PIPELINE_TALK, where, term, RULES[PIPELINE_TALK]))
    for sentence, hedged in sentences(text):
        out.extend(_check_sentence(where, sentence, hedged, facts, hypotheses, material))
    return out


def _check_sentence(  # noqa: PLR0917 - the sentence, where it is, and the material in its three views
    where: str, sentence: str, hedged: bool, facts: FactIndex, hypotheses: FactIndex, material: AnswerMaterial
) -> list[Violation]:
    out: list[Violation] = []
    spelled = cased(sentence)
    flat = spelled.lower()
    for token, kind in facts_of(spelled):
        if facts.supports(token, kind):
            continue
        if hypotheses.supports(token, kind):
            if not hedged:
                out.append(Violation(UNMARKED_HYPOTHESIS, where, token, RULES[UNMARKED_HYPOTHESIS]))
            continue
        rule = UNSUPPORTED_NUMBER if kind in (NUMBER, DATE, TIME) else UNSUPPORTED_IDENTIFIER
        out.append(Violation(rule, where, token, RULES[rule]))
    for quote in _quotes(flat):
        if not _quoted(quote, facts) and not (hedged and _quoted(quote, hypotheses)):
            out.append(Violation(UNSUPPORTED_QUOTE, where, quote, RULES[UNSUPPORTED_QUOTE]))
    if _ROOT_CAUSE.search(flat) and not _UNKNOWN_CAUSE.search(flat):
        stated_by = material.root_causes + (material.hypotheses if hedged else ())
        if not any(_says_same(flat, text) for text in stated_by):
            out.append(
                Violation(UNSUPPORTED_ROOT_CAUSE, where, sentence.strip(), RULES[UNSUPPORTED_ROOT_CAUSE])
            )
    return out


# ---------------------------------------------------------------------------------------------
# Sentences, hedges, root causes, quotes

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?=\s)")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)、]|[（(]?\d{1,2}[)）])\s+")
_HEDGE = re.compile(
    r"可能|或许|也许|疑似|推测|假设|猜测|待验证|待确认|未经证实|未证实|尚未证实|不确定|怀疑|方向"
    r"|\bpossibl|\bmay\b|\bmight\b|\bcould\b|\bperhaps\b|\blikely\b|\bsuspect|\bhypothes|\bunconfirmed\b"
    r"|\bunverified\b|\bnot (?:yet )?(?:confirmed|verified)\b|\bto (?:be )?(?:confirm|verif)",
    re.IGNORECASE,
)
_ROOT_CAUSE = re.compile(
    r"根因|根本原因|原因是|原因在于|是由.{0,30}?(?:导致|引起|造成)|导致了|引起了|造成了|归因于"
    r"|\broot[- ]cause|\b(?:is|was|were|are|being)\s+caused\s+by\b|\bthe\s+cause\s+(?:is|was)\b"
    r"|\b(?:is|was|are|were)\s+due\s+to\b|\bstems?\s+from\b|\bresult(?:s|ed)\s+from\b",
    re.IGNORECASE,
)
# "无法确定根因", "the root cause could not be determined": not knowing is always honest.
_UNKNOWN_CAUSE = re.compile(
    r"(?:无法|未能|不能|尚未|没有|未)(?:确定|找到|确认|定位|判断|查明|识别)|不确定|未知"
    r"|\b(?:could|can)\s*(?:not|n't)\b|\bcannot\b|\bunable\b|\bunknown\b|\bno\s+root[- ]cause\b"
    r"|\bnot\s+(?:yet\s+)?(?:been\s+)?(?:determined|identified|confirmed|known|found|established)\b",
    re.IGNORECASE,
)
# “…” "…" 「…」 『…』 `…`, ‘…’, and '…' not inside a word (payment-service's is no quote).
QUOTE = re.compile(
    r"[“\"「『`]([^”\"」』`\n]{1,300})[”\"」』`]|‘([^’\n]{1,300})’|(?<![a-z0-9])'([^'\n]{1,300})'(?![a-z0-9])"
)
_PLACEHOLDER = re.compile(r"<[a-z][^<>\n]{1,60}>|\{\{?[a-z_]{2,30}\}?\}|\btodo\b|\btbd\b|\blorem ipsum\b")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Sayings that nothing was found (matched on normalised, lowercased text).
_ABSENCE = re.compile(
    r"(?:未|没有|没)(?:检索|查询|查|搜索|发现|找|检测)到|未发现|没有发现|不存在"
    r"|found no\b|no matching evidence|(?:did not|didn't|could not|couldn't) find"
    r"|\bno\s+(?:[a-z0-9_-]+\s+){0,3}(?:was|were|is|are)\s+found\b|\bnot found\b"
)
# The stages and the contract fields a weak Composer recites from its input (normalised text).
_PIPELINE_TALK = re.compile(
    r"\b(?:gatekeeper|verifier|executor|composer|planner)\b|\ballowed[_ ]claims?\b|\bclaim[-_ ]?\d+\b"
    r"|\bclaim_(?:id|text|type)\b|\bevidence_(?:bindings?|excerpt)\b|\braw_path\b|\bsource_invocation_id\b"
    r"|\bexecutor_evidence_v\d\b|\bsupport_level\b|\bgroundedness(?:_score)?\b|\btool_trace\b"
)
# Plain words of running English (not identifiers, which any language's answer carries).
_PLAIN_WORD = re.compile(r"(?<![\w.\-])[a-z]{2,}(?![\w.\-])")


def sentences(text: str) -> list[tuple[str, bool]]:
    """(sentence, hedged) in order. Bullets under a hedged header line ("待验证的方向（未经证实）：",
    "Unconfirmed directions:") are hedged like the header."""
    out: list[tuple[str, bool]] = []
    header_hedged = False
    for line in text.splitlines():
        if not line.strip():
            header_hedged = False
            continue
        bullet = _BULLET.match(line) is not None
        if not bullet:
            header_hedged = False
        line_hedged = bool(_HEDGE.search(line))
        for part in _SENTENCE_END.split(_BULLET.sub("", line, count=1)):
            if part.strip():
                out.append((part, header_hedged or line_hedged or bool(_HEDGE.search(part))))
        if not bullet and line.rstrip().endswith((":", "：")):
            header_hedged = line_hedged
    return out


_ELLIPSIS = re.compile(r"…|\.{3}")


def quote_spans(quote: str) -> list[str]:
    """A quote's spans between ellipses (… or ...), each of which the material must hold."""
    return [p.strip() for p in _ELLIPSIS.split(quote) if p.strip()]


def _quoted(quote: str, index: FactIndex) -> bool:
    return all(index.quotes(span) for span in quote_spans(quote))


def _quotes(flat: str) -> list[str]:
    return [q.strip() for groups in QUOTE.findall(flat) for q in groups if q.strip()]


def _says_same(sentence: str, statement: str) -> bool:
    """The sentence states what `statement` says: most of its content tokens are the statement's."""
    mine = {t for t in tokenize(_ROOT_CAUSE.sub(" ", sentence)) if len(t) > 1}
    if not mine:
        return True
    theirs = set(tokenize(normalize(statement)))
    return len(mine & theirs) / len(mine) >= 0.5


def _core(text: str) -> str:
    """The text's letters, digits and CJK characters alone, normalised."""
    return "".join(ch for ch in normalize(text) if ch.isalnum())


def _meaningful(text: str) -> bool:
    return bool(re.search(r"[\w\u3400-\u9fff]", text)) and normalize(text).strip(" .…-") not in {"", "n/a"}


def _in_language(text: str, language: str) -> bool:
    if language.lower().startswith("zh"):
        return _CJK.search(text) is not None
    return len(_PLAIN_WORD.findall(text)) >= 2 or _CJK.search(text) is None
