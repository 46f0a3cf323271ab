"""Ground truth read straight from the bundled demo world's files, independently of the tools, so
that the pipeline tests' expectations come from the data and not from what the pipeline computed."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from tests.pipeline.conftest import DEMO_DIR

JSON = dict[str, Any]


@cache
def alerts() -> tuple[JSON, ...]:
    return tuple(json.loads((DEMO_DIR / "alerts.json").read_text(encoding="utf-8")))


@cache
def log_lines(service: str) -> tuple[JSON, ...]:
    path = DEMO_DIR / "logs" / f"{service}.ndjson"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def matching_alerts(service: str, alert_name: str, state: str | None = None) -> list[JSON]:
    return [
        a
        for a in alerts()
        if a["service"] == service
        and a["alert_name"] == alert_name
        and (state is None or a["state"] == state)
    ]


def matching_logs(service: str, pattern: str, level: str | None = None) -> list[JSON]:
    regex = re.compile(pattern, re.IGNORECASE)
    return [
        line
        for line in log_lines(service)
        if (level is None or line["level"] == level) and regex.search(json.dumps(line, ensure_ascii=False))
    ]


def knowledge_mentions(term: str) -> list[str]:
    """The texts of the knowledge documents that mention `term`."""
    texts = (path.read_text(encoding="utf-8") for path in sorted((DEMO_DIR / "knowledge").glob("*.md")))
    return [text for text in texts if term.lower() in text.lower()]
