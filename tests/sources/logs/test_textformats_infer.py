"""Files no named format reads: the header columns are inferred from a sample."""

from __future__ import annotations

from datetime import UTC, datetime

from evigate.server.sources.logs.headers import infer_header_format, text_format_for
from evigate.server.sources.logs.timestamps import Clock

# A made-up appliance log: sequence number, node, syslog-style time, subsystem code, level, message.
APPLIANCE = [
    "00017 rack2-n14 Mar 4 14:03:22 FAN WARN fan 3 speed below threshold (1200 rpm)",
    "00018 rack2-n14 Mar 4 14:03:25 PSU ERROR power supply 2 lost input",
    "00019 rack1-n02 Mar 4 14:03:31 FAN INFO fan 3 speed restored",
    "00020 rack1-n02 Mar 4 14:04:02 DISK WARN disk sdb reallocated sectors: 12",
    "00021 rack3-n07 Mar 4 14:04:10 NET INFO link eth1 up at 10000 Mb/s",
]
CLOCK = Clock(now=datetime(2026, 6, 1, tzinfo=UTC))


def test_header_columns_time_and_level_are_inferred() -> None:
    found = infer_header_format(APPLIANCE, clock=CLOCK)
    assert found is not None and found.name == "inferred(7 header fields)"
    parsed = found.parse(APPLIANCE[1])
    assert parsed is not None
    assert parsed.message == "power supply 2 lost input"
    assert parsed.level == "ERROR"
    assert parsed.timestamp == datetime(2026, 3, 4, 14, 3, 25, tzinfo=UTC)


def test_a_named_format_is_preferred_to_an_inferred_one() -> None:
    nginx = [f"2026/03/04 14:03:{s:02d} [error] 77#77: *{s} upstream prematurely closed" for s in range(5)]
    named = text_format_for(nginx)
    assert named is not None and named.name == "nginx_error"
    inferred = text_format_for(APPLIANCE)
    assert inferred is not None and inferred.name.startswith("inferred(")


def test_lines_opening_with_text_have_no_header_to_infer() -> None:
    prose = ["starting up", "listening on 0.0.0.0:8080", "ready to serve", "got SIGTERM, draining"]
    assert infer_header_format(prose) is None
    assert text_format_for(prose) is None


def test_plain_word_fields_followed_by_numbers_belong_to_the_header() -> None:
    # id, node, component, state, epoch, flag, then the message (an HPC-style event log).
    components = [("hw.fan", "state_change"), ("fs.lustre", "mount"), ("hw.psu", "state_change")]
    lines = [
        f"{4100 + i} node-{i % 9} {components[i % 3][0]} {components[i % 3][1]} {1077804742 + i} 1 "
        f"{['Fan 2 is in the failed state', 'Mount of /scratch took 3 s', 'PSU 1 restored'][i % 3]}"
        for i in range(12)
    ]
    found = infer_header_format(lines)
    assert found is not None and found.name == "inferred(6 header fields)"
    parsed = found.parse(lines[1])
    assert parsed is not None and parsed.message == "Mount of /scratch took 3 s"
