"""Section references in code resolve to headings of docs/design.md.

Code cites the design as "docs/design.md §N" (N like 5 or 5.1). Under server/, storage/ and rules/
every "§N" in a Python file (and in the rules catalog JSON) must name a numbered heading; elsewhere
(tests, bench, the README) every explicit "docs/design.md §N" must. The old spelling, which pointed
at a document outside the repository, must be gone.
"""

from __future__ import annotations

import re
from pathlib import Path

from evigate.rules.answer_check import RULES
from evigate.rules.rule_catalog import load_rule_catalog
from evigate.rules.sentence_types import RULES as SENTENCE_RULES

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "design.md"
HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.? \S", re.MULTILINE)
REFERENCE = re.compile(r"§\s?(\d+(?:\.\d+)*)")
DOC_REFERENCE = re.compile(r"docs/design\.md\s+§(\d+(?:\.\d+)*)")
OLD_SPELLING = "DESIGN" + " §"  # split so this file does not contain it


def headings() -> list[str]:
    return HEADING.findall(DOC.read_text(encoding="utf-8"))


def code_files() -> list[Path]:
    files = [p for root in ("server", "storage", "rules") for p in (REPO / root).rglob("*.py")]
    return sorted([*files, *(REPO / "rules").glob("*.json")])


def other_files() -> list[Path]:
    files = [p for root in ("tests", "bench", "scripts") for p in (REPO / root).rglob("*.py")]
    return sorted([*files, REPO / "README.md"])


def references(paths: list[Path], pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    """(file:line, section number) of every match."""
    found: list[tuple[str, str]] = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found.extend((f"{path.relative_to(REPO)}:{number}", m) for m in pattern.findall(line))
    return found


def test_sections_are_numbered_once() -> None:
    numbers = headings()
    assert len(numbers) > 20, "docs/design.md lost its numbered headings"
    duplicates = sorted({n for n in numbers if numbers.count(n) > 1})
    assert not duplicates, f"section numbers used twice in docs/design.md: {duplicates}"


def test_every_section_reference_in_code_resolves() -> None:
    known = set(headings())
    found = references(code_files(), REFERENCE) + references(other_files(), DOC_REFERENCE)
    assert found, "no section references found: the scan is broken"
    broken = [f"{where}: §{number}" for where, number in found if number not in known]
    assert not broken, "references to no heading of docs/design.md:\n" + "\n".join(broken)


def test_no_reference_points_outside_the_repository() -> None:
    stale = [
        f"{path.relative_to(REPO)}:{number}"
        for path in [*code_files(), *other_files(), *(REPO / "tests" / "golden").rglob("*.json")]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OLD_SPELLING in line
    ]
    assert not stale, "old design references (use docs/design.md §N):\n" + "\n".join(stale)


def test_the_rule_tables_list_every_rule() -> None:
    """§5.1, §5.4 and §5.8 name every Gatekeeper rule of the catalog, every answer-check rule and
    every sentence-check rule."""
    doc = DOC.read_text(encoding="utf-8")
    ids = [rule.id for rule in load_rule_catalog().rules] + list(RULES) + list(SENTENCE_RULES)
    missing = [rule_id for rule_id in ids if f"| `{rule_id}` |" not in doc]
    assert not missing, f"rules absent from the tables of docs/design.md §5: {', '.join(missing)}"
