"""The one reader of configuration documents: a TOML, JSON or YAML file (chosen by its extension)
whose top-level keys are settings and whose tables are sections (`[logs]`, `[sources]`, ...), each
taken by its reader by key. `--config-file` is such a document; `--logs-config` and
`--sources-file` may name the same file or another."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from evigate.rules.errors import EvigateError

YAML_SUFFIXES = (".yaml", ".yml")


class ConfigDocumentError(EvigateError, ValueError):
    """A configuration document cannot be read; the message names the file and the problem."""


def read_document(path: Path) -> dict[str, Any]:
    """The document's top-level table ({} for an empty YAML file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigDocumentError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        if path.suffix in YAML_SUFFIXES:
            data: Any = yaml.safe_load(text) or {}
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except (ValueError, yaml.YAMLError) as error:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise ConfigDocumentError(f"{path}: {error}") from None
    if not isinstance(data, dict):
        raise ConfigDocumentError(f"{path}: expected a table of settings")
    return data


def section(document: Mapping[str, Any], key: str, path: Path) -> dict[str, Any]:
    """The document's `key` table ({} when it has none)."""
    value = document.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigDocumentError(f"{path}: {key} must be a table of settings")
    return dict(value)
