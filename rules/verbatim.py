"""Word-for-word support of an evidence excerpt by the ref text it cites.

An excerpt is supported when it is the ref text's own words, clause by clause. Its clauses are
its parts between `,` `;` `，` `；` and line breaks: an excerpt may merge several fields of one ref
item in any order, so each clause is looked for on its own, anywhere in the text. Within a clause,
after both sides are normalised (NFKC, so full-width forms become half-width and "…" becomes
"..."; case-folded; whitespace and sentence punctuation , ; ! ? 。 、 double quotes and brackets
turned into spaces; runs of spaces made one, none kept beside CJK text) the clause occurs in the
text. An ellipsis ("…" or "...") may join spans of the same ref within a clause, each found after
the previous one, so a clause can leave words out but never add, reorder or change one; a clause
the ref does not have (appended, inserted or negated) fails. A span must not start or end inside
an ASCII word ("able" is not in "unable"). The `key=value` fields of a ref (`state=firing`,
`total=0`) are its atoms: an excerpt may pick them in any order, each a whole field of the ref,
and a field stands for an ellipsis between the words around it.

Leaving words out can still flip a statement: "Connection is … available" drops a "not". So the
words a clause skips between its spans, and the word just before each clause, must not be a
negation (the words are the catalog's, rule excerpt.negation_elided).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from evigate.rules.text import contains_token

# Clause boundaries of a folded excerpt (NFKC has made "，" and "；" half-width).
_CLAUSE = re.compile(r"[,;\n\r]")
_ELLIPSIS = re.compile(r"\.{3,}|\u22ef")  # after NFKC "…" is "..."; ⋯ has no compatibility form
# Separators become spaces: a C-level byte table for ASCII text (the hot path), a regex otherwise.
# Not the apostrophe: it belongs to words (couldn't).
_ASCII_SEPARATORS = bytes.maketrans(b'\t\n\r\x0b\x0c,;!?"()[]', b" " * 14)
_SEPARATORS = re.compile(r"[\s,;!?\u3002\u3001\"\u201c\u201d\u300c\u300d\u300e\u300f()\[\]\u3010\u3011]+")
# Beside a CJK character (or any non-ASCII one) spaces and colons carry nothing: 连接池 耗尽, 知识库：
_NEXT_TO_WIDE = re.compile(r"[ :]+(?=[^\x00-\x7f])|(?<=[^\x00-\x7f])[ :]+")
_PAIR_KEY = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_PAIR_END = frozenset(" \t\n,;|")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_JOINERS = frozenset("-_.:/")
# Whole tokens, so the "no" of no_evidence is not the word "no".
_WORD_BEFORE = re.compile(r"([a-z0-9_'-]+) $")
_WORDS = re.compile(r"[a-z0-9_'-]+")


@dataclass(frozen=True, slots=True)
class Negations:
    """What counts as a negation: whole English words (plus any word ending in n't) and CJK
    characters (`cjk_except`: two-character words that start with one of them but do not negate,
    such as 非常 "very")."""

    words: frozenset[str]
    cjk: frozenset[str]
    cjk_except: frozenset[str] = frozenset()

    @classmethod
    def of(cls, words: Iterable[str], cjk: str, cjk_except: Iterable[str] = ()) -> Negations:
        return cls(frozenset(w.casefold() for w in words), frozenset(cjk), frozenset(cjk_except))

    def negates(self, word: str) -> bool:
        return word in self.words or word.endswith("n't")

    def negates_cjk(self, text: str, at: int) -> bool:
        return text[at] in self.cjk and text[at : at + 2] not in self.cjk_except

    def in_gap(self, gap: str) -> str:
        """A negation at either edge of the skipped words (the word or CJK character right after
        the previous span or right before the next one), or "". Only the edges: a negation deep
        inside skipped text negates something the excerpt does not quote."""
        if not gap:
            return ""
        words: list[str] = _WORDS.findall(gap)
        for word in (words[0], words[-1]) if words else ():
            if self.negates(word):
                return word
        for at in (0, len(gap) - 1):
            if self.negates_cjk(gap, at):
                return gap[at]
        return ""

    def before(self, text: str, at: int) -> str:
        """The negation right before position `at` of a normalised text, or ""."""
        if at == 0:
            return ""
        if self.negates_cjk(text, at - 1):
            return text[at - 1]
        match = _WORD_BEFORE.search(text, max(0, at - 24), at)
        if match is not None and self.negates(match.group(1)):
            return match.group(1)
        return ""


@dataclass(frozen=True, slots=True)
class Support:
    """`unsupported`: the first excerpt words the ref text does not have ("" when it has them all);
    `negation`: a negation the excerpt leaves out ("" when none)."""

    unsupported: str = ""
    negation: str = ""

    @property
    def ok(self) -> bool:
        return not self.unsupported and not self.negation


SUPPORTED = Support()


def fold(text: str) -> str:
    """NFKC (full-width → half-width, "…" → "..."), typographic apostrophes made ASCII, case-folded.
    A full-width colon is sentence punctuation (知识库：…), never the ':' inside a token."""
    if text.isascii():
        return text.casefold()
    text = unicodedata.normalize("NFKC", text.replace("\uff1a", " "))
    return str(text.replace("\u2019", "'").replace("\u2018", "'").casefold())


def normalise(folded: str) -> str:
    """A folded text with whitespace and sentence punctuation reduced as the module says: one
    space between words, none beside CJK text; a colon counts as punctuation unless it is inside
    a token (23:05:28, since=2026-07-08T22:00:00Z)."""
    wide = not folded.isascii()
    if wide:
        folded = _SEPARATORS.sub(" ", folded)
    else:
        folded = folded.encode("ascii").translate(_ASCII_SEPARATORS).decode("ascii")
    if ":" in folded:
        folded = f" {folded} ".replace(": ", " ").replace(" :", " ")
    text = " ".join(folded.split())
    return _NEXT_TO_WIDE.sub("", text) if wide else text


def _pairs(folded: str) -> list[tuple[int, int]]:
    """(start, end) of every `key=value` field of a folded excerpt, as the refs write them."""
    found = []
    at = folded.find("=")
    while at > 0:
        start = at
        while start > 0 and folded[start - 1] in _PAIR_KEY:
            start -= 1
        end = at + 1
        while end < len(folded) and folded[end] not in _PAIR_END:
            end += 1
        while end > at + 1 and folded[end - 1] in ".:)":  # sentence punctuation after the value
            end -= 1
        if start < at and end > at + 1:
            found.append((start, end))
        at = folded.find("=", max(end, at + 1))
    return found


def spans(folded_excerpt: str) -> list[str]:
    """The normalised spans of a folded excerpt, split at each ellipsis."""
    return [s for s in (normalise(part) for part in _ELLIPSIS.split(folded_excerpt)) if s]


def _clean(text: str, start: int, end: int) -> bool:
    """The span text[start:end] cuts no ASCII token in two: no word, and no identifier joined by
    - _ . : / (HikariPool-1, db-01.prod.internal), nor a number from its % (92%)."""
    if start > 0 and text[start] in _ALNUM:
        before = text[start - 1]
        if before in _ALNUM or (before in _JOINERS and start >= 2 and text[start - 2] in _ALNUM):
            return False
    if end < len(text) and text[end - 1] in _ALNUM:
        after = text[end]
        if after in _ALNUM or after == "%":
            return False
        if after in _JOINERS and end + 1 < len(text) and text[end + 1] in _ALNUM:
            return False
    return True


def _find(text: str, span: str, start: int) -> int:
    at = text.find(span, start)
    while at >= 0 and not _clean(text, at, at + len(span)):
        at = text.find(span, at + 1)
    return at


def _unmatched_rest(text: str, span: str, start: int) -> str:
    """The part of `span` after its longest prefix (cut between tokens) found in `text`: the words
    the message names. Only on the failure path, so a linear scan is fine."""
    token = _ALNUM | _JOINERS | {"%"}
    for cut in range(len(span) - 1, 0, -1):
        if span[cut - 1] in token and span[cut] in token:
            continue
        if _find(text, span[:cut].rstrip(), start) >= 0:
            return span[cut:].strip() or span
    return span


def support(excerpt: str, text: str, negations: Negations | None) -> Support:
    """Whether `text` supports `excerpt` word for word, clause by clause (see the module
    docstring); left-out negations are looked for only when `negations` is given."""
    folded_text, folded = fold(text), fold(excerpt)
    if "=" in folded:
        pairs = _pairs(folded)
        for start, end in pairs:
            if not contains_token(folded_text, folded[start:end]):
                return Support(unsupported=folded[start:end])
        for start, end in reversed(pairs):  # each field stands for an ellipsis
            folded = f"{folded[:start]} ... {folded[end:]}"
    source = normalise(folded_text)
    quoted = False
    for clause in _CLAUSE.split(folded):
        found = _clause_support(source, spans(clause), negations)
        if found is not None and not found.ok:
            return found
        quoted = quoted or found is not None
    if not quoted and "=" not in excerpt:  # nothing but punctuation and ellipses
        return Support(unsupported=excerpt[:60])
    return SUPPORTED


def _clause_support(source: str, clause: list[str], negations: Negations | None) -> Support | None:
    """Whether the normalised `source` has the spans of one clause in order, with no negation
    right before the first or at the edges of the words skipped between them; None when the
    clause has no words."""
    position = 0
    for index, span in enumerate(clause):
        at = _find(source, span, position)
        if at < 0:
            return Support(unsupported=_unmatched_rest(source, span, position))
        if negations is not None:
            skipped = negations.before(source, at) if index == 0 else negations.in_gap(source[position:at])
            if skipped:
                return Support(negation=skipped)
        position = at + len(span)
    return SUPPORTED if clause else None


_RAW_WORD_BEFORE = re.compile(r"([A-Za-z0-9_'-]+)\s+$")


def quoted_negation(text: str, at: int, negations: Negations) -> str:
    """For an excerpt found verbatim at `at` of `text` (the Gatekeeper's fast path): a negation
    directly before it that the quote leaves out, or "". Reads the raw text: no normalising."""
    if at <= 0:
        return ""
    if negations.negates_cjk(text, at - 1):
        return text[at - 1]
    match = _RAW_WORD_BEFORE.search(text, max(0, at - 24), at)
    if match is not None and negations.negates(match.group(1).lower()):
        return match.group(1).lower()
    return ""
