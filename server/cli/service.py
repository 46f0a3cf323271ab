"""The commands that run the service: serve, migrate, worker, jobs (read from the database), sources
(checks the live Prometheus / Alertmanager the settings name)."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING

from evigate.server.cli.common import CliError
from evigate.server.settings import mask_url
from evigate.server.usecases.records import StorageError

if TYPE_CHECKING:
    from evigate.server.mcp_setup import McpOptions


def cmd_serve(args: argparse.Namespace) -> int:
    from evigate.server.app import App, serve
    from evigate.server.grpc import logs
    from evigate.server.settings import ConfigError, load_settings

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    mcp = _mcp_options(args)
    logs.configure(settings.logging.level, settings.logging.format)
    import logging

    logging.getLogger("evigate.config").info("settings", extra={"settings": settings.describe()})

    def announce(app: App) -> None:
        scheme = "grpcs" if settings.tls.enabled else "grpc"
        print(f"evigate serving on {scheme}://{app.address}", flush=True)
        if app.web is not None:
            print(f"evigate web viewer on {app.web.url}", flush=True)
        if app.mcp is not None:
            print(f"evigate MCP on {app.mcp.url}", flush=True)

    async def main() -> None:
        await serve(settings, announce, mcp)

    try:
        asyncio.run(main())
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    except (OSError, StorageError) as error:
        raise CliError(f"cannot start: {error}") from None
    return 0


def _mcp_options(args: argparse.Namespace) -> McpOptions | None:
    from evigate.server.mcp_setup import McpOptions
    from evigate.server.settings import ConfigError

    if not getattr(args, "mcp", None):
        return None
    options = McpOptions(args.mcp, tuple(args.mcp_allowed_origin or ()))
    try:
        options.address()  # a bad value stops serve before anything starts
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    return options


def cmd_mcp(args: argparse.Namespace) -> int:
    """MCP over stdio: stdout carries the protocol, so everything else (logs) goes to stderr."""
    from evigate.server.grpc import logs
    from evigate.server.mcp_setup import serve_stdio
    from evigate.server.settings import ConfigError, load_settings

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    logs.configure(settings.logging.level, settings.logging.format)
    try:
        asyncio.run(serve_stdio(settings))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    except (OSError, StorageError) as error:
        raise CliError(f"cannot start: {error}") from None
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from evigate.server.settings import ConfigError, load_settings
    from evigate.server.usecases.maintenance import migrate_database

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    if not settings.storage.database_url:
        settings.storage.state_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(migrate_database(settings.storage.resolved_database_url))
    from evigate.server.settings import mask_url

    print(f"migrated {mask_url(settings.storage.resolved_database_url)} to the latest schema")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from evigate.server.grpc import logs
    from evigate.server.opinion_worker import opinion_workers
    from evigate.server.settings import ConfigError, load_settings
    from evigate.server.worker import run_standalone

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    logs.configure(settings.logging.level, settings.logging.format)
    print(f"evigate worker on {mask_url(settings.storage.resolved_database_url)}", flush=True)
    try:
        asyncio.run(run_standalone(settings, opinion_workers(settings)))
    except StorageError as error:
        raise CliError(f"cannot run the worker: {error}") from None
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    """Reads the queue straight from the database (`--database-url`): it works with no server up."""
    import dataclasses

    from evigate.server.settings import ConfigError, load_settings
    from evigate.server.worker import format_stats, read_stats

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    from evigate.server.grpc import logs

    logs.configure("ERROR", "text")  # retry warnings would drown the answer
    try:
        stats = asyncio.run(read_stats(settings))
    except StorageError as error:
        raise CliError(f"cannot read the job queue: {error}") from None
    if args.json:
        print(json.dumps(dataclasses.asdict(stats)))
    else:
        print(format_stats(stats))
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    """Each source with its state: the log tree (and its index) and the configured live sources;
    exit 1 when one is not ready (usable in scripts)."""
    from evigate.server.live_sources import build_sources
    from evigate.server.settings import ConfigError, load_settings
    from evigate.server.sources.health import check_sources
    from evigate.server.sources.logs import LogReader
    from evigate.server.sources.logs.building import stored_state
    from evigate.server.sources.logs.log_config_file import LogConfigError
    from evigate.server.sources.sources_config import SourceConfigError
    from evigate.server.tool_sources import logs_settings

    try:
        settings = load_settings(vars(args))
        config = build_sources(settings)
        logs = logs_settings(settings)
    except (ConfigError, LogConfigError) as error:
        raise CliError(f"configuration: {error}") from None
    index, progress = stored_state(LogReader(logs))
    logs_row = {"name": "logs", "url": str(logs.root), "state": "ready" if index.ready else "unreachable",
                "detail": index.detail, "index": progress}  # fmt: skip
    try:
        # no event loop for a command without a source (it may be called from one, as in tests)
        states = asyncio.run(check_sources(config)) if config.configured() else []
    except SourceConfigError as error:
        raise CliError(f"configuration: sources: {error}") from None
    if args.json:
        rows = [
            {
                "name": h.name,
                "url": h.url,
                "state": "ready" if h.ready else "not_ready" if h.reachable else "unreachable",
                "version": h.version,
                "started_at": h.started_at.isoformat() if h.started_at else None,
                "detail": h.detail,
                "settings": c.describe(),
            }
            for h, c in zip(states, config.configured(), strict=True)
        ]
        print(json.dumps([logs_row, *rows], ensure_ascii=False))
    else:
        print(f"logs {logs.root}: {'ready' if index.ready else 'UNREADABLE'}; {index.detail}")
        for health in states:
            print(health.line())
        if not config.configured():
            where = settings.sources.data_dir or "the bundled demo world"
            print(f"no live source configured: alerts come from the files of {where}")
            flags = "--prometheus-url / --alertmanager-url"
            print(f"set {flags} (or EVIGATE_PROMETHEUS_URL / EVIGATE_ALERTMANAGER_URL)")
    return 0 if index.ready and all(h.ready for h in states) else 1


def cmd_cases_backfill(args: argparse.Namespace) -> int:
    """Structures the GENERAL cases straight in the database (no server needed); run twice, the
    second run finds nothing to do."""
    from evigate.server.settings import ConfigError, load_settings
    from evigate.server.usecases.cases import backfill_database

    try:
        settings = load_settings(vars(args))
    except ConfigError as error:
        raise CliError(f"configuration: {error}") from None
    try:
        report = asyncio.run(
            backfill_database(settings.storage.resolved_database_url, settings.sources.case_categories_file)
        )
    except StorageError as error:
        raise CliError(f"cannot back-fill: {error}") from None
    if args.json:
        print(json.dumps({"examined": report.examined, "structured": report.structured}))
    else:
        print(f"examined {report.examined} GENERAL case(s), structured {report.structured}")
    return 0
