"""The answer as the session page shows it: the Composer's sentences, each with links to the claims
it is bound to, the refs those claims cite and their cited excerpts; runbook steps as one numbered
list, the items after a list header (missing information, could-not-check, hypotheses) as a list.

A sentence bound to no claim or hypothesis that is not a fixed line composed by code cannot pass
the sentence check: were one stored, it is shown as the bug it is. Ids of the sentence material
that are no executor claim link where they come from: `call-<id>` to the failed call,
`missing-<n>` and `hypothesis-<n>` to the final round."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# The stored words of the contract (AnswerSentence), read as data: the web reaches no rules.
STEP = "step"
FAILED_CALL_PREFIX = "call-"
# Fixed lines after which the sentences are a bulleted list (rules.answer_text).
LIST_HEADERS = frozenset({"missing_header", "could_not_check_header", "hypotheses_header"})
EXCERPT_CHARS = 240
JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ClaimLink:
    """Where a sentence's claim is shown on the page, and what it cites."""

    label: str
    href: str
    citations: tuple[tuple[str, str], ...] = ()  # (label, href of the cited ref)
    excerpts: tuple[str, ...] = ()  # the cited excerpts, as the ref marks them


@dataclass(frozen=True, slots=True)
class SentenceView:
    text: str
    kind: str
    fixed_line: str
    claims: list[ClaimLink]
    violations: list[str]  # "rule “token”" of a refusal stored with the sentence

    @property
    def unbound(self) -> bool:
        """Bound to nothing and no fixed line: a bug."""
        return not self.claims and not self.fixed_line

    @property
    def citations(self) -> list[tuple[str, str]]:
        return list(dict.fromkeys(c for link in self.claims for c in link.citations))

    @property
    def excerpts(self) -> list[str]:
        return list(dict.fromkeys(e for link in self.claims for e in link.excerpts))


@dataclass
class AnswerBlock:
    """`header` (a fixed line), `lines` (sentences one per line), `steps` (a numbered list) or
    `items` (a bulleted list)."""

    kind: str
    sentences: list[SentenceView] = field(default_factory=list)


def blocks(sentences: Sequence[SentenceView]) -> list[AnswerBlock]:
    """The sentences grouped as the answer's text joins them."""
    out: list[AnswerBlock] = []
    in_list = False
    for sentence in sentences:
        if sentence.fixed_line:
            in_list = sentence.fixed_line in LIST_HEADERS
            out.append(AnswerBlock("header", [sentence]))
            continue
        kind = "steps" if sentence.kind == STEP else "items" if in_list else "lines"
        if out and out[-1].kind == kind:
            out[-1].sentences.append(sentence)
        else:
            out.append(AnswerBlock(kind, [sentence]))
    return out


def sentence_views(raw: Any, claims: Mapping[str, ClaimLink], final_round: str) -> list[SentenceView]:
    """The stored sentences (composer_output.sentences), each with the links of its ids."""
    views = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping):
            continue
        ids = [i for key in ("claim_ids", "hypothesis_ids") for i in _strings(item.get(key))]
        violations = [
            f"{v.get('rule_id', '')} “{v.get('token', '')}”"
            for v in item.get("violations") or []
            if isinstance(v, Mapping)
        ]
        views.append(
            SentenceView(
                text=str(item.get("text") or ""),
                kind=str(item.get("kind") or ""),
                fixed_line=str(item.get("fixed_line") or ""),
                claims=[claims.get(i) or _other(i, final_round) for i in ids],
                violations=violations,
            )
        )
    return views


def claim_link(label: str, anchor: str, bindings: Sequence[tuple[str, str, str]]) -> ClaimLink:
    """An executor claim's link; `bindings`: (citation label, href of its ref, excerpt)."""
    cited = [b for b in bindings if b[1]]
    return ClaimLink(
        label,
        f"#{anchor}",
        tuple(dict.fromkeys((b[0], b[1]) for b in cited)),
        tuple(dict.fromkeys(_cut(b[2]) for b in cited if b[2])),
    )


def _other(claim_id: str, final_round: str) -> ClaimLink:
    """An id that is no executor claim: a failed call, a missing item or a hypothesis."""
    if claim_id.startswith(FAILED_CALL_PREFIX) and claim_id[len(FAILED_CALL_PREFIX) :].isdigit():
        return ClaimLink(claim_id, f"#{claim_id}")
    return ClaimLink(claim_id, f"#{final_round}" if final_round else "")


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def _cut(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + " …"
