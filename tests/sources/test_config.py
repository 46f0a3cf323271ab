"""Source settings: flag > environment > config file, typed and validated at start-up."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.server.sources.sources_config import SourceConfigError, SourceSettings, sources_config


def test_a_flag_beats_the_environment_which_beats_the_file() -> None:
    file = {
        "prometheus": {"url": "http://file:9090", "timeout_s": 4},
        "alertmanager": {"url": "http://file:9093"},
    }
    env = {"EVIGATE_PROMETHEUS_URL": "http://env:9090", "EVIGATE_ALERTMANAGER_URL": "http://env:9093"}
    config = sources_config(prometheus_url="http://flag:9090", env=env, file_sections=file)
    assert config.prometheus is not None and config.alertmanager is not None
    assert config.prometheus.url == "http://flag:9090" and config.prometheus.read_timeout_s == 4
    assert config.prometheus.connect_timeout_s == 2.0
    assert config.alertmanager.url == "http://env:9093"
    assert sources_config(file_sections=file).alertmanager.url == "http://file:9093"  # type: ignore[union-attr]


def test_no_url_means_the_source_is_not_configured() -> None:
    assert sources_config(env={}).configured() == []


def test_the_bearer_token_may_come_from_the_environment_or_a_file(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("from-file\n")
    from_file = sources_config(
        prometheus_url="http://p", file_sections={"prometheus": {"bearer_token_file": str(token)}}
    )
    assert from_file.prometheus is not None and from_file.prometheus.bearer_token == "from-file"
    from_env = sources_config(prometheus_url="http://p", env={"EVIGATE_PROMETHEUS_BEARER_TOKEN": "from-env"})
    assert from_env.prometheus is not None and from_env.prometheus.bearer_token == "from-env"


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        ({"grafana": {}}, "unknown source section"),
        ({"prometheus": "http://p"}, "expected a mapping"),
        ({"prometheus": {"url": "p:9090"}}, "must start with http"),
        ({"prometheus": {"url": "http://p", "timeout_s": "soon"}}, "expected a number"),
        ({"prometheus": {"url": "http://p", "timeout_s": 0}}, "timeouts must be positive"),
        ({"prometheus": {"url": "http://p", "basic_auth": "u:p"}}, "basic_auth"),
        (
            {"prometheus": {"url": "http://p", "bearer_token": "t", "basic_auth": {"username": "u"}}},
            "not both",
        ),
        ({"prometheus": {"url": "http://p", "bearer_token_file": "/nonexistent/token"}}, "bearer_token_file"),
    ],
)
def test_malformed_settings_are_refused(sections: dict[str, object], message: str) -> None:
    with pytest.raises(SourceConfigError, match=message):
        sources_config(file_sections=sections)


def test_the_base_url_drops_a_trailing_slash() -> None:
    assert SourceSettings("prometheus", "http://p:9090/prom/").base_url == "http://p:9090/prom"


def test_prometheus_query_limits_come_from_its_section() -> None:
    config = sources_config(
        file_sections={"prometheus": {"url": "http://p", "max_series": 10, "max_window_s": 3600}}
    )
    assert config.prometheus_limits.max_series == 10 and config.prometheus_limits.max_window_s == 3600
    assert config.prometheus_limits.max_points == 1100  # untouched keys keep their defaults
    with pytest.raises(SourceConfigError, match="must be positive"):
        sources_config(file_sections={"prometheus": {"url": "http://p", "max_series": 0}})


def test_the_service_settings_carry_the_sources_from_flags_environment_and_file(tmp_path: Path) -> None:
    """`evigate serve` flags / EVIGATE_* variables / --sources-file, as the composition root reads them."""
    from evigate.server.live_sources import build_sources
    from evigate.server.settings import ConfigError, load_settings

    sources = tmp_path / "sources.yml"
    sources.write_text("sources:\n  prometheus: {url: 'http://file:9090', timeout_s: 4, max_series: 7}\n")
    env = {
        "EVIGATE_PROMETHEUS_URL": "http://env:9090",
        "EVIGATE_ALERTMANAGER_URL": "http://env:9093",
        "EVIGATE_PROMETHEUS_BEARER_TOKEN": "tok",
        "EVIGATE_SOURCES_FILE": str(sources),
    }
    settings = load_settings({"prometheus_url": "http://flag:9090"}, env)
    config = build_sources(settings)
    assert config.prometheus is not None and config.alertmanager is not None
    assert (config.prometheus.url, config.prometheus.read_timeout_s) == ("http://flag:9090", 4)
    assert config.prometheus.bearer_token == "tok" and config.prometheus_limits.max_series == 7
    assert config.alertmanager.url == "http://env:9093"
    assert settings.describe()["prometheus_bearer_token"] == "***"  # secrets never logged

    sources.write_text("sources:\n  prometheus: {url: 'ftp://nope'}\n")
    with pytest.raises(ConfigError, match="sources: prometheus: url must start with http"):
        build_sources(load_settings({}, {"EVIGATE_SOURCES_FILE": str(sources)}))
