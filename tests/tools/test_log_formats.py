"""query_logs on logs as they are found: the same answer from JSON and from plain text, a corrupt
line in each format skipped and reported while the query answers, time zones, and the logs root,
field names, patterns and default zone from --logs-dir / EVIGATE_LOGS_DIR / a config file."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evigate.server.settings import load_settings
from evigate.server.sources.logs.log_config_file import LogConfigError, log_config, read_section
from evigate.server.tool_sources import logs_settings
from tests.tools.conftest import make_harness, write_world

SAME = Path(__file__).resolve().parents[1] / "sources" / "logs" / "samples" / "same"


def _world(tmp_path: Path, name: str, files: dict[str, bytes]) -> Path:
    root = write_world(tmp_path / name)
    for rel, data in files.items():
        path = root / "logs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.mark.parametrize(
    "arguments",
    [
        {"service": "billing", "keyword": "HikariPool"},
        {"keyword": "connection refused"},  # only in the stack trace
        {"level": "WARN"},
        {"pattern": r"INV-\d+ issued"},
    ],
)
async def test_the_same_question_has_the_same_answer_from_json_and_from_text(
    tmp_path: Path, arguments: dict[str, str]
) -> None:
    answers = []
    for kind in ("json", "text"):
        world = write_world(tmp_path / kind)
        shutil.copytree(SAME / kind, world / "logs" / "billing")
        result = await make_harness(world).call("query_logs", **arguments)
        assert result.raw_result is not None, kind
        answers.append((result.raw_result["logs"], result.retrieval_details["evidence_refs"]))
        parser = result.raw_result["parsers"]["billing/billing.log"]
        assert parser == ("json" if kind == "json" else "log4j_thread")
    assert answers[0] == answers[1]


CORRUPT = {
    "json.log": b'{"time": "2026-07-08T23:00:00Z", "level": "error", "service": "j", "msg": "disk full"}\n'
    b'{"time": "2026-07-08T23:00:01Z", "level": "err\n',
    "logfmt.log": b'time=2026-07-08T23:00:00Z level=error service=f msg="disk full"\n'
    b"\xff\xfe\xfd not utf-8\n",
    "text.log": b"2026-07-08 23:00:00,000 ERROR [main] c.s.App - disk full\n\x00\x00\x00\x00\n",
    "cri/0.log": b"2026-07-08T23:00:00.000000000Z stderr F disk full\ngarbage a sidecar wrote\n",
}


async def test_a_corrupt_line_in_each_format_is_skipped_and_the_query_answers(tmp_path: Path) -> None:
    h = make_harness(_world(tmp_path, "corrupt", CORRUPT))
    result = await h.call("query_logs", keyword="disk full")
    assert result.status == "success" and result.raw_result is not None
    assert result.raw_result["total"] == 4
    assert result.raw_result["skipped_lines"] == 4
    assert sorted(result.raw_result["skipped_at"]) == [
        "cri/0.log:2 (not cri)",
        "json.log:2 (not json)",
        "logfmt.log:2 (not UTF-8)",
        "text.log:2 (binary)",
    ]
    assert result.raw_result["parsers"] == {
        "cri/0.log": "cri+raw",  # plain lines on a container's stdout: the runtime's time
        "json.log": "json",
        "logfmt.log": "logfmt",
        "text.log": "log4j_thread",
    }


async def test_time_zones_and_a_configured_default_zone(tmp_path: Path) -> None:
    files = {
        # The same moment, 23:05:28 UTC, written four ways.
        "a.log": b"2026-07-09T07:05:28+08:00 ERROR zoned offset\n",
        "b.ndjson": b'{"ts": 1783551928000, "level": "error", "message": "epoch milliseconds"}\n',
        "c.log.1.gz": gzip.compress(b"2026-07-08T16:05:28.000-07:00 ERROR rotated and zoned\n"),
        "d.log": b"2026-07-09 07:05:28 ERROR naive local time\n",
    }
    world = _world(tmp_path, "zones", files)
    section = {"default_tz": "Asia/Shanghai"}
    backend_logs = log_config(None, section, world / "logs")
    h = make_harness(world, logs=backend_logs)
    result = await h.call(
        "query_logs", level="ERROR", since="2026-07-08T23:05:28Z", until="2026-07-08T23:05:28Z"
    )
    assert result.raw_result is not None
    assert {x["timestamp"] for x in result.raw_result["logs"]} == {"2026-07-08 23:05:28"}
    assert result.raw_result["total"] == 4


async def test_logs_root_field_names_and_patterns_from_settings_and_a_config_file(tmp_path: Path) -> None:
    world = _world(
        tmp_path,
        "configured",
        {
            "x.json": b'{"event_time": "2026-07-08T23:00:00Z", "sev": "WARN", "component": "billing", '
            b'"text": "quota near"}\n',
            "y.log": b"2026/07/08 23:01:00 | W | billing | quota nearly gone\n",
        },
    )
    config = tmp_path / "evigate.toml"
    config.write_text(
        "[logs]\n"
        "[logs.fields]\n"
        'time = ["event_time"]\nlevel = "sev"\nservice = ["component"]\n'
        "[[logs.patterns]]\n"
        'name = "pipes"\n'
        "regex = '(?P<timestamp>\\S+ \\S+) \\| (?P<level>\\w) \\| (?P<service>\\S+) \\| (?P<message>.*)'\n"
        'time_format = "%Y/%m/%d %H:%M:%S"\n',
        encoding="utf-8",
    )
    other = tmp_path / "elsewhere"
    settings = load_settings(
        {"data_dir": str(tmp_path / "unused"), "logs_config": str(config)},
        {"EVIGATE_LOGS_DIR": str(world / "logs")},
    )
    logs = logs_settings(settings)
    assert logs.root == world / "logs"  # the environment names the root; no flag
    assert logs_settings(load_settings({"data_dir": str(other)}, {})).root == other / "logs"
    h = make_harness(world, logs=logs)
    result = await h.call("query_logs", service="billing", level="WARN")
    assert result.raw_result is not None
    assert [x["message"] for x in result.raw_result["logs"]] == ["quota nearly gone", "quota near"]
    assert result.raw_result["parsers"] == {"x.json": "json", "y.log": "pattern:pipes"}
    bad = tmp_path / "bad.toml"
    bad.write_text('[logs]\ndefault_tz = "Mars/Olympus"\n', encoding="utf-8")
    with pytest.raises(LogConfigError, match="default_tz"):
        log_config(None, read_section(bad), world)


@pytest.mark.slow  # a fresh interpreter per run
@pytest.mark.parametrize(
    "first", ["evigate.server.sources.logs", "evigate.server.tools", "evigate.server.sources.logs.search"]
)
def test_the_reader_and_the_tools_import_in_either_order(first: str) -> None:
    # server.sources.logs imports server.tools.backend and the tools read logs through it: neither
    # may need the other half-imported (bench/ and the reader's tests import the reader first).
    code = f"import {first}; import evigate.server.tools, evigate.server.sources.logs; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr
