"""The `--name` flag of every setting for the `evigate` subcommands (server.cli), generated from
the settings sections (server.settings) with each field's help text; secrets have no flag
(command lines show in `ps`): environment or config file only."""

from __future__ import annotations

import argparse

from evigate.server.settings import RETIRED, setting_fields


def add_flags(parser: argparse.ArgumentParser) -> None:
    """One `--name` flag per setting (default None, so unset flags fall back to the environment)."""
    for name, (_, _, spec) in setting_fields().items():
        if spec.metadata.get("secret"):
            continue
        flag = "--" + name.replace("_", "-")
        help_text = spec.metadata.get("help") or f"(env EVIGATE_{name.upper()})"
        if spec.type == "bool":
            parser.add_argument(
                flag, dest=name, default=None, action=argparse.BooleanOptionalAction, help=help_text
            )
        else:
            parser.add_argument(flag, dest=name, default=None, metavar=name.upper(), help=help_text)
    for name, legal in RETIRED.items():
        flag = "--" + name.replace("_", "-")
        parser.add_argument(
            flag, dest=name, default=None, metavar=name.upper(), help=f"accepted; only {legal}"
        )
