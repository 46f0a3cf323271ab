"""One typed, frozen settings object of sections (server, storage, agents, llm, sources, logs,
cluster, ...), built from flags, `EVIGATE_<NAME>` environment variables and the config file
(loading.py). Every field of a section is one public setting with one flat name, so flags,
variables and config-file keys read as they always did. `describe()` renders the settings for the
start-up log with every secret masked."""

from evigate.server.settings.base import ConfigError, Section, mask_url, split_host_port, web_address
from evigate.server.settings.loading import RETIRED, load_settings, read_config_file, read_tokens
from evigate.server.settings.pipeline import Agent, Anchor, EmbeddingBackend, Fallback, JsonMode, Retry
from evigate.server.settings.root import Settings, setting_fields, setting_names
from evigate.server.settings.service import STATE_DIR_NAME, GrpcSettings

__all__ = [
    "RETIRED",
    "STATE_DIR_NAME",
    "Agent",
    "Anchor",
    "ConfigError",
    "EmbeddingBackend",
    "Fallback",
    "GrpcSettings",
    "JsonMode",
    "Retry",
    "Section",
    "Settings",
    "load_settings",
    "mask_url",
    "read_config_file",
    "read_tokens",
    "setting_fields",
    "setting_names",
    "split_host_port",
    "web_address",
]
