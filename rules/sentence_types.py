"""Plain data of the sentence check (rules.sentence_check): the structured answer, what its
sentences may be bound to, and the refusals.

An answer is a list of `Sentence`s, each with its kind and the ids of the allowed claims and
hypotheses it expresses. A hypothesis is named by its place among the allowed hypotheses
(`hypothesis-1` is the first). A sentence bound to nothing is allowed only as a fixed connective line
composed by code: kind `note` with a `fixed_line` id of `FIXED_LINES`, in the answer's language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from evigate.rules.enums import ClaimType, SentenceKind, ToolName

# rule id → what it refuses; the table that docs/design.md §5.8 and the trace show. A rule's meaning
# never changes under its id: a stricter or looser rule gets the next version.
UNBOUND = "sentence.unbound@1"
UNKNOWN_ID = "sentence.unknown_id@1"
KIND = "sentence.kind@1"
FIXED_LINE = "sentence.fixed_line@1"
HEDGE = "sentence.hedge@1"
SUBJECT = "sentence.subject@3"
STATE = "sentence.state@2"
ABSENCE = "sentence.absence@3"
UNCHECKED = "sentence.unchecked@2"
YES_NO = "sentence.yes_no@2"
VALUE = "sentence.value@2"
ROLE = "sentence.role@2"
RELATIVE_TIME = "sentence.relative_time@2"
QUOTE = "sentence.quote@1"
CAUSAL = "sentence.causal@2"
TREND = "sentence.trend@2"
SEVERITY = "sentence.severity@2"
QUANTITY = "sentence.quantity@2"
ACTION = "sentence.action@2"
DEFINITION = "sentence.definition@1"
VAGUE_QUANTITY = "sentence.vague_quantity@1"

RULES: dict[str, str] = {
    UNBOUND: "a sentence bound to no claim or hypothesis that is not a fixed line composed by code",
    UNKNOWN_ID: "a claim or hypothesis id that names no allowed claim or hypothesis",
    KIND: "the sentence's kind needs a claim it is not bound to (absence: a negative claim; "
    "could-not-check: a failed call; hypothesis: a hypothesis)",
    FIXED_LINE: "a fixed line whose text is not the fixed text of its id in the answer's language",
    HEDGE: "a hypothesis not marked as unconfirmed, or a finding bound only to hypotheses",
    SUBJECT: "a service, alert, pod, host or other name that is the subject of no bound claim, or "
    "names that no bound excerpt holds together",
    STATE: "firing / resolved / silenced / found, with its negation, disagrees with the bound "
    "claims' type and the state in their refs",
    ABSENCE: "says nothing was found where no bound negative claim of that subject and scope says so, "
    "wider than what the query asked, or of a subject the session found something of (a failed call is "
    "never 'nothing found')",
    UNCHECKED: "says a check could not run where no bound call failed, or reports a failed call "
    "without saying so",
    YES_NO: "a yes / no that disagrees with what the bound claims show about the question's state",
    VALUE: "a number, count, duration, date or time (digits or spelled out) that the bound excerpts "
    "do not hold, or that belongs to another subject's excerpt",
    ROLE: "a value called current / threshold / limit that the excerpt gives under another role",
    RELATIVE_TIME: "a relative time (since last night, an hour ago, 刚才, 昨晚) the bound excerpts do "
    "not state",
    QUOTE: "a quoted text that no bound claim or excerpt holds",
    CAUSAL: "a causal link or consequence (because, led to, is behind, is making … fail, users, 导致, 由于, "
    "源于, 用户) that no bound claim states, outside a hypothesis marked unconfirmed",
    TREND: "a trend (rising, falling, spiking, 上升, 下降) that no bound claim states, outside a "
    "hypothesis marked unconfirmed",
    SEVERITY: "a severity word (critical, minor, nothing urgent, 严重, 轻微) that the bound refs' "
    "severity contradicts or does not state",
    QUANTITY: "all / every / both / none, or a count of alerts, services or items, that the allowed "
    "claims contradict",
    ACTION: "an action (restart, roll back, scale up, 回滚, 扩容) that no bound runbook claim or "
    "hypothesis gives",
    DEFINITION: "a definition or implication (X means Y, indicates that, 意味着, 也就是说) whose words "
    "no bound claim or excerpt holds, outside a hypothesis marked unconfirmed",
    VAGUE_QUANTITY: "a vague quantity (dozens of, hundreds of, lots of, 几十, 上千, 大量) that no count "
    "of the bound excerpts falls in",
}

# The fixed connective lines composed by code: id → text per language.
FIXED_LINES: dict[str, dict[str, str]] = {
    "findings_intro": {"zh": "根据本次查询返回的证据：", "en": "Based on the evidence this query returned:"},
    "steps_header": {"zh": "处理步骤（来自知识库）：", "en": "Steps (from the runbook):"},
    "missing_header": {"zh": "缺少的信息：", "en": "Missing information:"},
    "could_not_check_header": {"zh": "未能检查的项目：", "en": "Could not be checked:"},
    "hypotheses_header": {"zh": "待验证的方向（未经证实）：", "en": "Unconfirmed directions (to verify):"},
    "next_steps_header": {
        "zh": "建议的下一步（仅限继续收集证据）：",
        "en": "Suggested next steps (evidence collection only):",
    },
    "rejected": {
        "zh": "没有通过校验的证据，无法给出可靠结论。",
        "en": "The evidence did not pass verification; no reliable conclusion can be given.",
    },
    "low_confidence": {
        "zh": "证据不足，以下结论置信度较低。",
        "en": "The evidence is insufficient; the following has low confidence.",
    },
    "nothing_confirmed": {"zh": "本次没有可以确认的结论。", "en": "Nothing could be confirmed this time."},
    "scope_note": {
        "zh": "注：未检索到匹配证据仅针对本次查询条件。",
        "en": "Note: finding no matching evidence holds only for this query's filters.",
    },
}

HYPOTHESIS_ID_PREFIX = "hypothesis-"


def hypothesis_id(index: int) -> str:
    """The id of the allowed hypothesis at `index` (from 0): hypothesis-1 for the first."""
    return f"{HYPOTHESIS_ID_PREFIX}{index + 1}"


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One verified excerpt of a claim: its text, the ref text it cites, the tool that returned it
    and the ref's raw_path."""

    text: str
    ref_text: str = ""
    tool: str = ""
    raw_path: str = ""


@dataclass(frozen=True, slots=True)
class ClaimFacts:
    """An allowed claim. `failed`: it reports a call that failed (a could-not-check item)."""

    claim_id: str
    claim_type: str
    text: str
    excerpts: tuple[Excerpt, ...] = ()
    failed: bool = False

    @property
    def negative(self) -> bool:
        return self.claim_type == ClaimType.NEGATIVE_OBSERVATION and not self.failed

    @property
    def runbook(self) -> bool:
        """A runbook claim: it cites the knowledge base (lookup_knowledge)."""
        return any(e.tool == ToolName.LOOKUP_KNOWLEDGE for e in self.excerpts)


@dataclass(frozen=True, slots=True)
class HypothesisFacts:
    hypothesis_id: str
    text: str


@dataclass(frozen=True)
class SentenceMaterial:
    """What the sentences may be bound to: the allowed claims and hypotheses, the names the
    service catalog knows (any shape, one-word names included) with their aliases (alias →
    canonical name), the question and the answer's language."""

    claims: tuple[ClaimFacts, ...]
    hypotheses: tuple[HypothesisFacts, ...] = ()
    catalog: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    question: str = ""
    language: str = "zh"

    @cached_property
    def claims_by_id(self) -> dict[str, ClaimFacts]:
        return {c.claim_id: c for c in self.claims}

    @cached_property
    def hypotheses_by_id(self) -> dict[str, HypothesisFacts]:
        return {h.hypothesis_id: h for h in self.hypotheses}


def material_to_seed(material: SentenceMaterial) -> dict[str, Any]:
    """The material as JSON (the golden sessions of the corpus)."""
    return {
        "question": material.question,
        "language": material.language,
        "catalog": list(material.catalog),
        "aliases": dict(material.aliases),
        "claims": [
            {
                "claim_id": c.claim_id,
                "claim_type": c.claim_type,
                "text": c.text,
                "failed": c.failed,
                "excerpts": [
                    {"text": e.text, "ref_text": e.ref_text, "tool": e.tool, "raw_path": e.raw_path}
                    for e in c.excerpts
                ],
            }
            for c in material.claims
        ],
        "hypotheses": [{"hypothesis_id": h.hypothesis_id, "text": h.text} for h in material.hypotheses],
    }


def material_from_seed(data: Mapping[str, Any]) -> SentenceMaterial:
    """The inverse of `material_to_seed`."""
    return SentenceMaterial(
        claims=tuple(
            ClaimFacts(
                c["claim_id"],
                c["claim_type"],
                c["text"],
                tuple(Excerpt(e["text"], e["ref_text"], e["tool"], e["raw_path"]) for e in c["excerpts"]),
                bool(c.get("failed")),
            )
            for c in data["claims"]
        ),
        hypotheses=tuple(HypothesisFacts(h["hypothesis_id"], h["text"]) for h in data.get("hypotheses", [])),
        catalog=tuple(data.get("catalog", [])),
        aliases=tuple(dict(data.get("aliases", {})).items()),
        question=data.get("question", ""),
        language=data.get("language", "zh"),
    )


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list | tuple) else ()


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a structured answer."""

    kind: str
    text: str
    claim_ids: tuple[str, ...] = ()
    hypothesis_ids: tuple[str, ...] = ()
    fixed_line: str = ""

    @classmethod
    def from_seed(cls, data: Mapping[str, Any]) -> Sentence:
        """From seed JSON (possibly a model's: wrong types read as empty)."""
        kind, text, fixed = data.get("kind"), data.get("text"), data.get("fixed_line")
        return cls(
            kind if isinstance(kind, str) else "",
            text if isinstance(text, str) else "",
            _strings(data.get("claim_ids")),
            _strings(data.get("hypothesis_ids")),
            fixed if isinstance(fixed, str) else "",
        )

    def to_seed(self) -> dict[str, Any]:
        return {
            "kind": self.kind or None,
            "text": self.text,
            "claim_ids": list(self.claim_ids),
            "hypothesis_ids": list(self.hypothesis_ids),
            "fixed_line": self.fixed_line,
        }


KINDS = frozenset(SentenceKind)


@dataclass(frozen=True, slots=True)
class SentenceViolation:
    """One refusal: the rule, the sentence (its index; -1 for the answer as a whole), the
    offending word, value or name, and what the rule means."""

    rule_id: str
    sentence: int
    token: str
    message: str

    @property
    def field(self) -> str:
        return f"sentences[{self.sentence}]" if self.sentence >= 0 else "user_facing_answer"

    def to_seed(self) -> dict[str, str]:
        """The contract's AnswerCheckViolation shape."""
        return {"rule_id": self.rule_id, "field": self.field, "token": self.token, "message": self.message}


@dataclass(frozen=True)
class SentenceCheckResult:
    """Per sentence, its violations (in the sentences' order); `answer`: those of the whole answer."""

    sentences: tuple[tuple[SentenceViolation, ...], ...]
    answer: tuple[SentenceViolation, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.answer and not any(self.sentences)

    @property
    def violations(self) -> tuple[SentenceViolation, ...]:
        return self.answer + tuple(v for per in self.sentences for v in per)

    def rules(self) -> set[str]:
        return {v.rule_id for v in self.violations}

    def to_seed(self) -> list[dict[str, str]]:
        return [v.to_seed() for v in self.violations]

    def annotated(self, sentences: Sequence[Sentence]) -> list[dict[str, Any]]:
        """The sentences in seed shape (the contract's AnswerSentence), each with its refusals."""
        return [
            {**s.to_seed(), "violations": [v.to_seed() for v in per]}
            for s, per in zip(sentences, self.sentences, strict=True)
        ]
