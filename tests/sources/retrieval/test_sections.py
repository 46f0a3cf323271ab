"""The runbook section a question's intent asks for: fix, diagnose, what it is, who to escalate to."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.server.sources.retrieval.documents import Block, markdown_blocks
from evigate.server.sources.retrieval.sections import choose, intent_of, notes


def _doc(*headings: str) -> list[Block]:
    return [Block(f"k/x.md#{n}", "k/x.md", "X", f"text of {h}", h) for n, h in enumerate(headings)]


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("How do I fix 'sorry, too many clients already'?", "fix"),
        ("How do I diagnose 5xx errors coming from the gateway?", "diagnose"),
        ("What does the JavaHeapUsageHigh alert mean?", "what"),
        ("The fares cache keeps missing. What should I do about it?", "fix"),
        ("fare-search 缓存命中率下降怎么处理？", "fix"),
        ("消息堆积的处理步骤是什么？", "fix"),
        ("ledger_sync 的 UniqueViolation 报错怎么排查？", "diagnose"),
        ("payments-db 出问题应该找谁？", "escalate"),
        ("HikariCP pool", None),
    ],
)
def test_the_intent_of_a_question(question: str, intent: str | None) -> None:
    assert intent_of(question) == intent


def test_the_section_is_the_one_whose_heading_names_the_intent() -> None:
    doc = _doc("Symptoms", "Diagnosis", "Mitigation", "Escalation")
    assert choose(doc, doc[0], "fix").block.section == "Mitigation"
    assert choose(doc, doc[2], "diagnose").block.section == "Diagnosis"
    assert choose(doc, doc[2], "what").block.section == "Symptoms"
    assert choose(doc, doc[1], "escalate").block.section == "Escalation"
    assert "heading Mitigation" in choose(doc, doc[0], "fix").reason


def test_chinese_headings_and_the_fallbacks() -> None:
    doc = _doc("现象", "处理步骤", "升级与负责人")
    assert choose(doc, doc[0], "fix").block.section == "处理步骤"
    # no diagnosis section: its steps diagnose; no intent: the ranking's best section stays
    assert choose(doc, doc[0], "diagnose").block.section == "处理步骤"
    assert choose(doc, doc[0], None).block == doc[0]
    assert [b.section for b in notes(doc, choose(doc, doc[0], "fix"))] == ["升级与负责人"]


RUNBOOK = """---
title: Database connection timeouts
---
# Database Connection Troubleshooting

## Overview
Connections to the database time out.

## Investigation Steps

### 1. Check the pods
```bash
kubectl get pods -n {namespace}
# a comment in a code block, no heading
kubectl describe pod -n {namespace}
```

### 2. Check the database
Run `SELECT 1` against it.

## Resolution
Restart the pool.

## Owners
The data team.
"""


def test_a_heading_over_subsections_answers_with_all_of_them(tmp_path: Path) -> None:
    path = tmp_path / "db.md"
    path.write_text(RUNBOOK, encoding="utf-8")
    doc = markdown_blocks(path, "k/db.md")
    # the code block's "# comment" stays in its step; the title is no parent
    assert [(b.section, b.parent) for b in doc] == [
        ("Overview", ""),
        ("1. Check the pods", "Investigation Steps"),
        ("2. Check the database", "Investigation Steps"),
        ("Resolution", ""),
        ("Owners", ""),
    ]
    assert "a comment in a code block" in doc[1].text
    choice = choose(doc, doc[0], "diagnose")
    assert [b.section for b in choice.blocks] == ["1. Check the pods", "2. Check the database"]
    assert choice.heading == "Investigation Steps"
    assert "heading Investigation Steps" in choice.reason and "2 subsections" in choice.reason
    assert [b.section for b in notes(doc, choice)] == ["Owners"]
    fix = choose(doc, doc[1], "fix")
    assert (fix.heading, [b.section for b in fix.blocks]) == ("Resolution", ["Resolution"])
