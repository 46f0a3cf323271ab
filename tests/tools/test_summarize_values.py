"""summarize_logs keeps what a template's values were, when it fired, and the rare severe lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from evigate.server.sources.logs.slots import buckets, slot_stats, template_regex
from tests.tools.conftest import make_harness, write_logs, write_world

START = datetime(2026, 7, 8, 22, 0, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _world(tmp_path: Path) -> Path:
    root = write_world(tmp_path)
    lines = []
    for i in range(60):  # latency climbs from 120 ms to 2950 ms over an hour, one line a minute
        moment = START + timedelta(minutes=i)
        lines.append(
            {
                "time": _iso(moment),
                "level": "WARN",
                "service": "pricing",
                "msg": f"slow upstream call took {120 + 48 * i}ms",
            }
        )
    for i in range(200):
        moment = START + timedelta(seconds=15 * i)
        lines.append(
            {"time": _iso(moment), "level": "ERROR", "service": "pricing", "msg": f"cache miss for key k{i}"}
        )
    lines.append(
        {
            "time": _iso(START + timedelta(minutes=30)),
            "level": "INFO",
            "service": "pricing",
            "msg": "configuration reloaded from /etc/pricing.yaml",
        }
    )
    lines.append(
        {
            "time": _iso(START + timedelta(minutes=31)),
            "level": "ERROR",
            "service": "pricing",
            "msg": "java.lang.OutOfMemoryError: Java heap space",
        }
    )
    lines.append(
        {
            "time": _iso(START + timedelta(minutes=20)),
            "level": "INFO",
            "service": "pricing",
            "msg": "Starting PricingApplication v3.2.1 using Java 21",
        }
    )
    lines.sort(key=lambda x: x["time"])
    write_logs(root, "pricing.log", lines)
    return root


async def test_a_slot_keeps_its_first_last_min_max_and_the_counts_per_bucket(tmp_path: Path) -> None:
    h = make_harness(_world(tmp_path))
    result = await h.call(
        "summarize_logs", service="pricing", level="WARN", since="2026-07-08T22:00:00Z", limit=2
    )
    assert result.raw_result is not None
    slow = next(p for p in result.raw_result["patterns"] if p["template"].startswith("slow upstream"))
    slot = slow["slots"][0]
    assert "first=120ms@2026-07-08 22:00:00" in slot and "last=2952ms@2026-07-08 22:59:00" in slot
    assert "min=120ms" in slot and "max=2952ms" in slot and "distinct=60" in slot
    assert slow["per_bucket"].startswith("per 5m: 2026-07-08 22:00=5 22:05=5 ")
    ref_texts = [ref["text"] for ref in result.retrieval_details["evidence_refs"]]
    assert any("first=120ms@2026-07-08 22:00:00" in text for text in ref_texts)


async def test_rare_severe_events_are_listed_beyond_the_limit_and_below_the_level(tmp_path: Path) -> None:
    h = make_harness(_world(tmp_path))
    result = await h.call(
        "summarize_logs", service="pricing", level="WARN", since="2026-07-08T22:00:00Z", limit=1
    )
    assert result.raw_result is not None
    patterns = result.raw_result["patterns"]
    assert patterns[0]["template"].startswith("cache miss")
    severe = {p["severe"]: p for p in patterns[1:]}
    assert severe["out of memory"]["count"] == 1
    assert severe["configuration reload"]["levels"] == ["INFO"]  # found below WARN by its words
    assert severe["version start"]["example"] == "Starting PricingApplication v3.2.1 using Java 21"


async def test_an_error_summary_lists_an_out_of_memory_line_logged_as_a_warning(tmp_path: Path) -> None:
    """Redis logs a failed fork for want of memory at warning level; asked for its errors, the
    summary still lists it among the rare severe events, and a query for its errors finds it."""
    root = write_world(tmp_path)
    lines = [
        {
            "time": _iso(START + timedelta(minutes=i)),
            "level": "INFO",
            "service": "sessions",
            "msg": f"saved {i}",
        }
        for i in range(30)
    ]
    lines.append(
        {
            "time": _iso(START + timedelta(minutes=31)),
            "level": "WARN",
            "service": "sessions",
            "msg": "Can't save in background: fork: Cannot allocate memory",
        }
    )
    write_logs(root, "sessions.log", lines)
    h = make_harness(root)
    result = await h.call("summarize_logs", service="sessions", level="ERROR", since="2026-07-08T22:00:00Z")
    assert result.raw_result is not None
    (pattern,) = result.raw_result["patterns"]
    assert (pattern["severe"], pattern["levels"]) == ("out of memory", ["WARN"])


def test_a_value_run_the_masking_reshaped_is_left_out_not_guessed() -> None:
    moment = START
    stats = slot_stats(
        "took <*> for <*>", [(moment, "took 5ms for a"), (moment, "took 7 ms for b c d"), (moment, "x")]
    )
    assert [s.distinct for s in stats] == [2, 2]
    assert template_regex("a <*> b").fullmatch("a  1 2  b") is not None


def test_buckets_take_the_smallest_named_width_that_cuts_the_span_in_twelve() -> None:
    moments = [START + timedelta(minutes=m) for m in (0, 1, 59)]
    cut = buckets(moments, START, START + timedelta(hours=1))
    assert cut.width_s == 300 and [c for _, c in cut.counts] == [2, 1]


async def test_changed_since_puts_new_and_risen_templates_first_with_both_sides(tmp_path: Path) -> None:
    root = write_world(tmp_path, now="2026-07-08T23:00:00Z")
    lines = []
    for minute in range(-60, 60, 20):  # a steady trickle all along
        lines.append((START + timedelta(minutes=minute), "WARN", f"queue depth {minute}"))
    for minute in range(0, 60, 30):  # 2 in the hour before 22:00
        lines.append((START - timedelta(minutes=60 - minute), "ERROR", f"upstream reset by peer {minute}"))
    for second in range(0, 3600, 120):  # 30 in the hour after 22:00
        lines.append((START + timedelta(seconds=second), "ERROR", f"upstream reset by peer {second}"))
    lines.append((START + timedelta(minutes=5), "ERROR", "schema migration 42 failed"))
    lines.sort()
    write_logs(
        root,
        "ledger.log",
        [{"time": _iso(t), "level": lv, "service": "ledger", "msg": m} for t, lv, m in lines],
    )
    h = make_harness(root)
    result = await h.call(
        "summarize_logs", service="ledger", level="WARN", changed_since="2026-07-08T22:00:00Z"
    )
    assert result.raw_result is not None
    patterns = result.raw_result["patterns"]
    assert patterns[0]["template"].startswith("schema migration")
    assert patterns[0]["change"].startswith(
        "change=new before=0 from 2026-07-08 21:00:00 to 2026-07-08 22:00:00"
    )
    assert patterns[1]["template"].startswith("upstream reset by peer")
    assert patterns[1]["change"] == (
        "change=rose before=2 from 2026-07-08 21:00:00 to 2026-07-08 22:00:00 (2.0/h) "
        "after=30 from 2026-07-08 22:00:00 to 2026-07-08 23:00:00 (30.0/h)"
    )
    texts = [ref["text"] for ref in result.retrieval_details["evidence_refs"]]
    assert "after=30 from 2026-07-08 22:00:00" in texts[1]
