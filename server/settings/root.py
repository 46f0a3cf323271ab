"""The settings object: one frozen section per part of the service, each validating itself, and
the checks that span two sections."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from evigate.server.settings.base import ConfigError, Section, mask_url, setting
from evigate.server.settings.pipeline import AgentSettings, EmbeddingSettings, EvaluationSettings, LlmSettings
from evigate.server.settings.service import (
    AuthSettings,
    GrpcSettings,
    LimitSettings,
    LoggingSettings,
    MetricsSettings,
    StorageSettings,
    TlsSettings,
    WebSettings,
    WorkerSettings,
)
from evigate.server.settings.sources import ClusterSettings, LogSettings, SourceSettings


@dataclass(frozen=True)
class Settings:
    grpc: GrpcSettings = field(default_factory=GrpcSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    agents: AgentSettings = field(default_factory=AgentSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    evaluation: EvaluationSettings = field(default_factory=EvaluationSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    sources: SourceSettings = field(default_factory=SourceSettings)
    logs: LogSettings = field(default_factory=LogSettings)
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    auth: AuthSettings = field(default_factory=AuthSettings)
    tls: TlsSettings = field(default_factory=TlsSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    web: WebSettings = field(default_factory=WebSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    # TOML/JSON with settings as top-level keys (below flags and env)
    config_file: Path | None = setting(
        None, "TOML or JSON file of settings (top-level keys = setting names; flags and env win)"
    )

    @classmethod
    def of(cls, **values: Any) -> Settings:
        """Settings from public names (`listen=..., llm_model=...`), the rest defaults."""
        return cls().replace(**values)

    def replace(self, **values: Any) -> Settings:
        """A copy with the named public settings changed."""
        index = setting_fields()
        unknown = sorted(set(values) - set(index))
        if unknown:
            raise TypeError(f"unknown setting(s) {', '.join(unknown)}")
        changes: dict[str, dict[str, Any]] = {}
        for name, value in values.items():
            section, field_name, _ = index[name]
            changes.setdefault(section, {})[field_name] = value
        root = changes.pop("", {})
        for section, fields_changed in changes.items():
            root[section] = replace(getattr(self, section), **fields_changed)
        return replace(self, **root)

    def sections(self) -> dict[str, Section]:
        return {f.name: value for f in fields(self) if isinstance(value := getattr(self, f.name), Section)}

    def value(self, name: str) -> Any:
        """The value of the public setting `name`."""
        section, field_name, _ = setting_fields()[name]
        return getattr(getattr(self, section) if section else self, field_name)

    def validate(self) -> None:
        """Each section checks itself; then the checks that need two sections."""
        for section in self.sections().values():
            section.validate()
        if "llm" in self.agents.stage_backends().values() and not (self.llm.base_url and self.llm.model):
            raise ConfigError(
                "an llm stage (agent_backend or <stage>_backend llm) needs llm_base_url and llm_model"
            )
        if self.evaluation.model and not (self.evaluation.base_url or self.llm.base_url):
            raise ConfigError("evaluation_llm_model needs evaluation_llm_base_url (or llm_base_url)")

    def describe(self) -> dict[str, Any]:
        """The settings by public name as JSON-able values, secrets masked (and passwords in URLs)."""
        out: dict[str, Any] = {}
        for name, (_, _, spec) in setting_fields().items():
            value = self.value(name)
            if name == "auth_tokens":
                value = f"<{len(value)} token(s)>" if value else "<none>"
            elif spec.metadata.get("secret"):
                value = "***" if value else ""
            elif name == "database_url":
                value = mask_url(self.storage.resolved_database_url)
            elif isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out


_INDEX: dict[str, tuple[str, str, Field[Any]]] = {}


def setting_fields() -> Mapping[str, tuple[str, str, Field[Any]]]:
    """Every public setting: its name → (section attribute, "" for the root; field name; field)."""
    if not _INDEX:
        for f in fields(Settings):
            if isinstance(f.default_factory, type) and issubclass(f.default_factory, Section):
                for name, inner in f.default_factory.public_names():
                    _INDEX[name] = (f.name, inner.name, inner)
            else:
                _INDEX[f.name] = ("", f.name, f)
    return _INDEX


def setting_names() -> list[str]:
    return list(setting_fields())
