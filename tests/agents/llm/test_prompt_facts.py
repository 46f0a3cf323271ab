"""No prompt holds a fact of any world: a service, alert name, number or log phrase of the bundled
demo data (server/demo) or of any world under tests/worlds/. A small model copies its prompt's
example as if it were evidence; examples must be placeholders or built from the session's own
tool results (docs/design.md §2.2)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evigate.server.agents.llm import load_prompt
from evigate.server.agents.llm.llm_settings import STAGES

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "server" / "agents" / "llm" / "prompts"
WORLDS = [ROOT / "server" / "demo", *sorted(p for p in (ROOT / "tests" / "worlds").glob("*") if p.is_dir())]
# an identifier: has a hyphen between letters or digits, or is CamelCase with two capitals
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+")
# a number worth naming: two or more digits, a decimal or a percentage, not inside a word
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.$\[])(?:\d+\.\d+|\d{2,})%?(?![A-Za-z0-9_])|(?<![A-Za-z0-9_.])\d+%")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|[\u4e00-\u9fff]+")
PHRASE_WORDS = 4


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _world_strings(world: Path) -> Iterator[str]:
    for path in sorted(world.rglob("*")):
        if path.suffix == ".json":
            yield from _strings(json.loads(path.read_text("utf-8")))
        elif path.suffix in {".ndjson", ".jsonl"}:
            for line in path.read_text("utf-8").splitlines():
                if line.strip():
                    yield from _strings(json.loads(line))
        elif path.suffix in {".log", ".txt"}:
            yield from path.read_text("utf-8").splitlines()
        if path.suffix in {".ndjson", ".jsonl", ".log"}:
            yield path.stem  # a log file is named after its service


def facts_of(text: str) -> set[str]:
    """The identifiers (services, alert names, ...), numbers and 4-word phrases of a text,
    lower-cased: a world's facts and a prompt's are compared as sets."""
    facts = {*_IDENT.findall(text), *_NUMBER.findall(text)}
    words = _WORD.findall(text)
    facts.update(" ".join(words[i : i + PHRASE_WORDS]) for i in range(len(words) - PHRASE_WORDS + 1))
    return {fact.lower() for fact in facts if len(fact) >= 2}


@functools.cache
def world_facts(world: Path) -> set[str]:
    facts: set[str] = set()
    for text in _world_strings(world):
        facts |= facts_of(text)
    return facts


def _prompt_texts() -> dict[str, str]:
    texts = {path.name: path.read_text("utf-8") for path in sorted(PROMPTS.glob("*.md"))}
    texts.update({f"{stage} (rendered)": load_prompt(stage).text for stage in STAGES})  # type: ignore[arg-type]
    return texts


def test_the_worlds_are_found_and_have_facts() -> None:
    facts = world_facts(WORLDS[0])
    # the scan must see what a prompt example would copy: a service, an alert, a number, a phrase
    assert {"payment-service", "highcpuusage", "92%"} <= facts
    assert any(len(fact.split()) == PHRASE_WORDS for fact in facts)


@pytest.mark.parametrize("world", WORLDS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_prompt_holds_a_fact_of_the_world(world: Path) -> None:
    facts = world_facts(world)
    leaks = {name: sorted(facts & facts_of(text)) for name, text in _prompt_texts().items()}
    assert {name: found for name, found in leaks.items() if found} == {}


def test_the_scan_catches_a_demo_example() -> None:
    facts = world_facts(WORLDS[0])
    example = (
        '"claim_text": "payment-service 当前存在 HighCPUUsage 告警，CPU 使用率为 92%。", '
        '"evidence_excerpt": "HighCPUUsage, service=payment-service, state=firing, current=92%"'
    )
    assert {"payment-service", "highcpuusage", "92%"} <= facts & facts_of(example)
