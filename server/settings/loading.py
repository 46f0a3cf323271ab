"""Settings from flags, `EVIGATE_<NAME>` environment variables and the config file.

Precedence: a flag wins over the environment, the environment over the config file
(`--config-file` / `EVIGATE_CONFIG_FILE`: TOML or JSON whose top-level keys are setting names; its
tables, such as `[logs]`, are sections other readers take), and that over the embedded default. Every
setting has one name: the flag is `--<name with dashes>`, the variable `EVIGATE_<NAME UPPERCASE>`
(`database_url` ⇄ `--database-url` ⇄ `EVIGATE_DATABASE_URL`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evigate.server.config_document import ConfigDocumentError, read_document
from evigate.server.settings.base import ConfigError
from evigate.server.settings.root import Settings, setting_fields, setting_names

# Names no longer settings, still accepted (flag, variable, config key) with their one legal value.
RETIRED = {"tool_backend": "fixture"}


def _parse_bool(text: str) -> bool:
    lowered, true = text.strip().lower(), {"1", "true", "yes", "on"}
    if lowered in true or lowered in {"0", "false", "no", "off", ""}:
        return lowered in true
    raise ValueError(f"not a boolean: {text!r}")


def _convert(name: str, kind: Any, raw: Any) -> Any:
    """Turns a flag or environment string into the field's type."""
    if not isinstance(raw, str):
        return raw  # already typed (argparse booleans, tuples)
    try:
        if kind in ("bool",):
            return _parse_bool(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind in ("Path", "Path | None"):
            return Path(raw).expanduser() if raw else None
        if kind == "tuple[str, ...]":
            return tuple(t.strip() for t in raw.split(",") if t.strip())
    except ValueError as error:
        raise ConfigError(f"{name}: {error}") from None
    return raw


def load_settings(
    flags: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Builds Settings from parsed flags (None = not given), the environment and the config file."""
    flags = flags or {}
    env = os.environ if environ is None else environ
    config_file = flags.get("config_file") or env.get("EVIGATE_CONFIG_FILE")
    from_file = read_config_file(Path(config_file).expanduser()) if config_file else {}
    values: dict[str, Any] = {}
    for name, (_, _, spec) in setting_fields().items():
        raw = _given(name, flags, env, from_file, spec.type)
        if raw is not None:
            values[name] = _convert(name, spec.type, raw)
    for name, legal in RETIRED.items():
        raw = _given(name, flags, env, from_file, "str")
        if raw is not None and raw != legal:
            raise ConfigError(f"{name}: expected {legal}, got {raw!r}")
    settings = Settings.of(**values)
    if settings.auth.tokens_file is not None:
        tokens = settings.auth.tokens + read_tokens(settings.auth.tokens_file)
        settings = settings.replace(auth_tokens=tokens)
    settings.validate()
    return settings


def _given(
    name: str, flags: Mapping[str, Any], env: Mapping[str, str], from_file: dict[str, Any], kind: Any
) -> Any:
    raw = flags.get(name)
    if raw is None:
        raw = env.get(f"EVIGATE_{name.upper()}")
    if raw is None and name in from_file:
        raw = _file_value(name, kind, from_file[name])
    return raw


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a configuration document (server/config_document.py): its top-level keys
    that are not tables (those are other readers' sections). A key that names no setting is an
    error (a typo would otherwise be ignored)."""
    try:
        data = read_document(path)
    except ConfigDocumentError as error:
        raise ConfigError(f"config_file: {error}") from None
    settings = {k: v for k, v in data.items() if not isinstance(v, dict)}
    known = {*setting_names(), *RETIRED} - {"config_file"}  # one file; it names no other
    unknown = sorted(key for key in settings if key not in known)
    if unknown:
        raise ConfigError(f"config_file {path}: unknown setting(s) {', '.join(unknown)}")
    return settings


def _file_value(name: str, kind: Any, value: Any) -> Any:
    """A config-file value as the flag/environment string `_convert` reads, or already typed."""
    if kind == "tuple[str, ...]" and isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, bool):
        if kind != "bool":
            raise ConfigError(f"{name}: expected {kind}, got a boolean")
        return value
    if isinstance(value, int | float) and (kind == "float" or (kind == "int" and isinstance(value, int))):
        return value
    if isinstance(value, list | dict):
        raise ConfigError(f"{name}: expected {kind}, got {type(value).__name__}")
    return str(value)


def read_tokens(path: Path) -> tuple[str, ...]:
    """One token per line; blank lines and `#` comments ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConfigError(f"auth_tokens_file: cannot read {path}: {error.strerror}") from None
    return tuple(line.strip() for line in lines if line.strip() and not line.strip().startswith("#"))
