"""A structured answer (its sentences) as the text the user reads, for every Composer.

The sentences carry no citation markers: the marker `[n]` is added here, where n is the place of the
bound claim among the allowed claims (the viewer links the same ids). Runbook steps become one
numbered list, could-not-check and missing items a bulleted list after their header, and the rest
of the findings one short line each. `user_facing_answer` is this text; `answer_summary` the first
line without its markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules.enums import SentenceKind
from evigate.rules.sentence_types import Sentence

JSON = dict[str, Any]
# Fixed lines after which the sentences are a bulleted list.
_LIST_HEADERS = frozenset({"missing_header", "could_not_check_header", "hypotheses_header"})


def markers(sentence: Sentence, numbers: Mapping[str, int]) -> str:
    """` [1][2]`: the citation markers of a sentence's claims, in the order of the allowed claims."""
    cited = sorted({numbers[c] for c in sentence.claim_ids if c in numbers})
    return "".join(f"[{n}]" for n in cited)


def render(sentences: Sequence[Sentence], claim_ids: Sequence[str]) -> str:
    """The answer's text: one line per sentence, steps numbered, list items bulleted."""
    numbers = {claim_id: i for i, claim_id in enumerate(claim_ids, start=1)}
    lines: list[str] = []
    step, in_list = 0, False
    for sentence in sentences:
        cite = markers(sentence, numbers)
        text = f"{sentence.text} {cite}" if cite else sentence.text
        if sentence.fixed_line:
            step, in_list = 0, sentence.fixed_line in _LIST_HEADERS
            lines.append(text)
        elif sentence.kind == SentenceKind.STEP:
            step += 1
            lines.append(f"{step}. {text}")
        elif in_list:
            lines.append(f"- {text}")
        else:
            step = 0
            lines.append(text)
    return "\n".join(lines)


def output(
    sentences: Sequence[Sentence], claim_ids: Sequence[str], language: str, actions: Sequence[JSON] = ()
) -> JSON:
    """The composer_output of a structured answer."""
    text = render(sentences, claim_ids)
    summary = next((s.text for s in sentences if not s.fixed_line), text.splitlines()[0] if text else "")
    return {
        "answer_summary": summary,
        "recommended_actions": list(actions),
        "user_facing_answer": text,
        "sentences": [s.to_seed() for s in sentences],
        "language": language,
    }


def sentences_of(output: Mapping[str, Any]) -> list[Sentence]:
    """The sentences of a composer_output (a model's, possibly malformed: what is not a sentence is
    dropped)."""
    raw = output.get("sentences")
    if not isinstance(raw, list):
        return []
    return [Sentence.from_seed(item) for item in raw if isinstance(item, Mapping)]
