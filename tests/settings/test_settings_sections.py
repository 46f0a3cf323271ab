"""The settings' sections: one public name per field, the flags generated from them, each section's
own checks, and the retired tool_backend still accepted with its one value."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from evigate.server.settings import ConfigError, Section, Settings, load_settings, setting_fields
from evigate.server.settings.pipeline import EmbeddingSettings
from evigate.server.settings.service import GrpcSettings, LimitSettings, TlsSettings
from evigate.server.settings_flags import add_flags


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    return parser


def test_every_setting_but_a_secret_has_its_flag_and_the_same_name() -> None:
    flags = {a.dest: a.option_strings for a in _parser()._actions if a.dest != "help"}
    for name, (_, _, spec) in setting_fields().items():
        if spec.metadata["secret"]:
            assert name not in flags, name  # command lines show in `ps`
        else:
            assert flags[name][0] == "--" + name.replace("_", "-")
    secrets = {n for n, (_, _, spec) in setting_fields().items() if spec.metadata["secret"]}
    assert secrets == {
        *("auth_tokens", "llm_api_key", "evaluation_llm_api_key", "embedding_api_key"),
        *("prometheus_bearer_token", "alertmanager_bearer_token"),
    }


def test_public_names_map_to_sections() -> None:
    settings = Settings.of(llm_model="m", web="127.0.0.1:8080", kubeconfig=Path("/k"), max_claims=3)
    assert settings.llm.model == "m" and settings.web.address == "127.0.0.1:8080"
    assert settings.cluster.kubeconfig == Path("/k") and settings.limits.claims == 3
    assert settings.value("kube_context") == "" and settings.value("agent_backend") == "offline"
    with pytest.raises(TypeError, match="tool_backend"):
        Settings.of(tool_backend="fixture")


def test_a_flag_parses_into_its_section() -> None:
    args = vars(
        _parser().parse_args(["--llm-planner-anchor", "none", "--kube-in-cluster", "--max-rounds", "4"])
    )
    settings = load_settings(args, {})
    assert settings.llm.planner_anchor == "none" and settings.cluster.in_cluster is True
    assert settings.agents.max_rounds == 4


@pytest.mark.parametrize(
    ("section", "message"),
    [
        (GrpcSettings(listen="nowhere"), "listen: expected HOST:PORT"),
        (GrpcSettings(max_concurrent_rpcs=0), "max_concurrent_rpcs must be positive"),
        (LimitSettings(claims=0), "max_claims must be positive"),
        (TlsSettings(cert=Path("/c.pem")), "tls_cert and tls_key go together"),
        # a wrong choice arrives as a string from a flag, a variable or the config file
        (Settings.of(verifier_backend="magic").agents, "verifier_backend: expected offline or llm"),
        (Settings.of(llm_executor_fallback="retry").llm, "llm_executor_fallback: expected offline or fail"),
        (Settings.of(log_format="xml").logging, "log_format: expected json or text"),
        (EmbeddingSettings(backend="openai"), "embedding_backend openai needs"),
    ],
)
def test_each_section_checks_itself(section: Section, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        section.validate()


def test_tool_backend_is_accepted_with_its_one_value_only(tmp_path: Path) -> None:
    load_settings({"tool_backend": "fixture"}, {"EVIGATE_TOOL_BACKEND": "fixture"})
    config = tmp_path / "evigate.toml"
    config.write_text('tool_backend = "fixture"\n', encoding="utf-8")
    load_settings({"config_file": str(config)}, {})
    with pytest.raises(ConfigError, match="tool_backend: expected fixture, got 'prometheus'"):
        load_settings({}, {"EVIGATE_TOOL_BACKEND": "prometheus"})
    assert "tool_backend" not in load_settings({}, {}).describe()
