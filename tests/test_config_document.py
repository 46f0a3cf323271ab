"""One configuration document, many readers: the settings, [logs] and [sources] of one file, in
TOML, JSON or YAML by its extension; --logs-config and --sources-file still name their own files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evigate.server.config_document import ConfigDocumentError, read_document, section
from evigate.server.live_sources import build_sources
from evigate.server.settings import ConfigError, load_settings
from evigate.server.tool_sources import logs_settings

TOML = """
log_level = "DEBUG"

[logs]
root = "{root}"
default_level = "WARN"

[sources.prometheus]
url = "http://file:9090"
max_series = 7
"""


def _document(tmp_path: Path, suffix: str) -> Path:
    root = tmp_path / "var-log"
    root.mkdir(exist_ok=True)
    data = {
        "log_level": "DEBUG",
        "logs": {"root": str(root), "default_level": "WARN"},
        "sources": {"prometheus": {"url": "http://file:9090", "max_series": 7}},
    }
    path = tmp_path / f"evigate{suffix}"
    if suffix == ".toml":
        path.write_text(TOML.format(root=root), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.write_text(
            f"log_level: DEBUG\nlogs:\n  root: {root}\n  default_level: WARN\n"
            "sources:\n  prometheus: {url: 'http://file:9090', max_series: 7}\n",
            encoding="utf-8",
        )
    return path


@pytest.mark.parametrize("suffix", [".toml", ".json", ".yaml"])
def test_one_config_file_feeds_every_reader(tmp_path: Path, suffix: str) -> None:
    settings = load_settings({"config_file": str(_document(tmp_path, suffix))}, {})
    assert settings.logging.level == "DEBUG"
    logs = logs_settings(settings)
    assert logs.root == tmp_path / "var-log" and logs.default_level == "WARN"
    sources = build_sources(settings)
    assert sources.prometheus is not None and sources.prometheus.url == "http://file:9090"
    assert sources.prometheus_limits.max_series == 7


def test_the_own_files_of_logs_and_sources_still_win(tmp_path: Path) -> None:
    document = _document(tmp_path, ".toml")
    own_logs = tmp_path / "logs.toml"
    own_logs.write_text(f'[logs]\nroot = "{tmp_path}"\n', encoding="utf-8")
    own_sources = tmp_path / "sources.yml"
    own_sources.write_text("sources:\n  alertmanager: {url: 'http://am:9093'}\n", encoding="utf-8")
    flags = {"config_file": str(document), "logs_config": str(own_logs), "sources_file": str(own_sources)}
    settings = load_settings(flags, {})
    assert logs_settings(settings).root == tmp_path
    sources = build_sources(settings)
    assert sources.prometheus is None and sources.alertmanager is not None


def test_a_section_that_is_not_a_table_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('logs = "var/log"\n', encoding="utf-8")
    with pytest.raises(ConfigDocumentError, match=r"bad.toml: logs must be a table"):
        section(read_document(path), "logs", path)
    path.write_text("[logs\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config_file: .*bad.toml"):
        load_settings({"config_file": str(path)}, {})
