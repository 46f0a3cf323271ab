"""A summarize_logs claim quotes what the template's ref holds beyond its head: how it changed
across the compared moment and its first varying value, each as a verbatim piece; a list intent
quotes every template."""

from __future__ import annotations

from evigate.rules.types import EvidenceRef
from evigate.server.agents.offline.calls import PlannedCall
from evigate.server.agents.offline.claims import observation_text
from evigate.server.tools.calls import ToolCallResult

CHANGE = (
    "change=rose before=2 from 2026-07-08 21:00:00 to 2026-07-08 22:00:00 (2.0/h) "
    "after=30 from 2026-07-08 22:00:00 to 2026-07-08 23:00:00 (30.0/h)"
)
SLOT = (
    "slot1: first=120ms@2026-07-08 22:00:00 last=2952ms@2026-07-08 22:59:00 min=120ms max=2952ms distinct=60"
)


def _ref(i: int, details: str = "") -> EvidenceRef:
    head = (
        f'template="slow call {i} took <*>" count=60 first=2026-07-08 22:00:00 last=2026-07-08 22:59:00 '
        f'levels=WARN example="slow call {i} took 120ms"'
    )
    return EvidenceRef(f"$.patterns[{i}]", head + details)


def _result() -> ToolCallResult:
    return ToolCallResult(1, "summarize_logs", {}, "success", None, {}, {})


def test_the_change_and_the_first_slot_are_quoted_verbatim() -> None:
    call = PlannedCall("summarize_logs", {"service": "pricing"}, "pricing", level="WARN")
    ref = _ref(0, f" | {CHANGE} | {SLOT} | per 5m: 2026-07-08 22:00=5 22:05=5")
    text = observation_text(call, _result(), [ref], "en")
    assert f'"{CHANGE}"' in text and f'"{SLOT}"' in text
    assert "per 5m" not in text


def test_a_list_intent_quotes_every_template() -> None:
    refs = [_ref(i) for i in range(5)]
    listed = observation_text(PlannedCall("summarize_logs", {}, None, purpose="list"), _result(), refs, "en")
    capped = observation_text(PlannedCall("summarize_logs", {}, None), _result(), refs, "en")
    assert all(f"slow call {i} took <*>" in listed for i in range(5))
    assert "slow call 4 took" not in capped
