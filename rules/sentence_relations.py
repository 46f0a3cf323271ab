"""Whether a sentence's causal or trend word states a relation its bound claims state (the
connective rules of the sentence check, docs/design.md §5.8)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evigate.rules import sentence_words as w
from evigate.rules.enums import ClaimType, SentenceKind
from evigate.rules.sentence_reading import Clause
from evigate.rules.sentence_units import Unit
from evigate.rules.text import tokenize

_HAN = re.compile(r"[\u4e00-\u9fff]")
_SAME_WORDS = 0.5  # share of a clause's words a claim must hold to state its relation
# words that say nothing of what a relation is between
_FUNCTION_WORD = re.compile(
    r"(?:the|an?|is|are|was|were|be|been|of|to|in|on|at|for|and|or|by|its?|this|that|with|as|from|ha[sd]|have"
    r"|because|due|caus(?:e|es|ed|ing)|led|leads?|results?|resulted|so|thus|hence|therefore"
    r"|的|了|是|在|和|与|因为|由于|导致|造成|引起|所以|因此)"
)


@dataclass(frozen=True)
class RelationContext:
    """What of a sentence the relation test reads: its bound units, its kind and its hedging."""

    units: list[Unit]
    kind: str
    hedged: bool
    with_hypotheses: bool


def relation_stated(
    ctx: RelationContext, clause: Clause, text: str, word: re.Match[str], marked: str
) -> bool:
    """A bound claim states the relation: hedged in a hypothesis, or said by a bound claim of the
    clause's subjects (a root cause, or an excerpt or claim text with the same kind of word) that
    holds most of the words on each side of the connective ("X because Y": X and Y). A runbook
    says what often happens, not what happened: it states relations only for steps."""
    if ctx.hedged and (ctx.kind == SentenceKind.HYPOTHESIS or ctx.with_hypotheses):
        return True
    pattern = word.re
    names = [n for n, _ in [*clause.services, *clause.alerts, *clause.names]]
    sides = [text[: word.start()], text[word.end() :]]
    wanted = [
        {tok for tok in tokenize(side) if len(tok) > 1 and not _FUNCTION_WORD.fullmatch(tok)}
        for side in sides
    ]
    # a Chinese sentence over an English excerpt: its Latin words and the names on each side
    split = next((m.start() for m in pattern.finditer(marked)), len(marked))
    entities = clause.names if clause.inherited else [*clause.services, *clause.alerts, *clause.names]
    across = [
        {tok for tok in wanted[0] if tok.isascii()} | {n for n, at in entities if at < split},
        # from inside the connective on: "是 maxmemory 满了的结果" holds its cause
        {tok for tok in tokenize(text[word.start() + 1 :]) if tok.isascii() and len(tok) > 1}
        | {n for n, at in entities if at >= split},
    ]
    for unit in ctx.units:
        # a claim that cites a runbook may carry its words in its text
        claim_text = "" if unit.claim.runbook and ctx.kind != SentenceKind.STEP else unit.claim_text
        said = unit.claim.claim_type == ClaimType.ROOT_CAUSE or pattern.search(unit.text)
        if not (said or pattern.search(claim_text)):
            continue
        # the text that states the relation, not every text of the claim
        stating = (unit.text if said else "") + "\n" + (claim_text if pattern.search(claim_text) else "")
        if not all(n in unit.services or n in stating for n in names):
            continue
        theirs = set(tokenize(stating))
        if all(len(mine & theirs) >= _SAME_WORDS * len(mine) for mine in wanted):
            return True
        if (
            _HAN.search(text)
            and not _HAN.search(unit.text)
            and (pattern is not w.CAUSAL or all(across))  # a cause has both its sides
            and all(
                len({x for x in mine if x in theirs or (x in names and (x in stating or x in unit.services))})
                >= _SAME_WORDS * len(mine)
                for mine in across
            )
        ):
            return True
    return False
