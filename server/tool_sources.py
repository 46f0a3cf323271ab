"""What the file-backed tools read, from the settings: the log tree (query_logs, summarize_logs)
and lookup_knowledge's semantic search. Used by the composition root (server.app); the live
Prometheus / Alertmanager sources are built by server.live_sources."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from evigate.server.settings import Settings
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs.building import IndexBuild
from evigate.server.sources.logs.log_config import LogConfig
from evigate.server.sources.logs.log_config_file import log_config, read_section
from evigate.server.sources.logs.store import location
from evigate.server.sources.retrieval.embedder import Embedder
from evigate.server.sources.retrieval.semantic_knowledge import SemanticKnowledge
from evigate.server.sources.retrieval.store import SqliteVectorStore
from evigate.server.sources.source_set import SourceSet
from evigate.server.tools import demo_data_dir, knowledge_dir
from evigate.storage import Database


def logs_settings(settings: Settings) -> LogConfig:
    """The log tree the tools read: --logs-dir, else the root of the [logs] table (of --logs-config,
    else of --config-file), else DATA_DIR/logs;
    its index persisted beside it, or under the state directory when that is not writable (and for
    the bundled demo, which lives inside the package)."""
    document = settings.logs.config or settings.config_file  # its [logs] table
    section = read_section(document) if document is not None else {}
    data_dir = settings.sources.data_dir if settings.sources.data_dir is not None else demo_data_dir()
    config = log_config(settings.logs.dir, section, data_dir / "logs")
    fallback = settings.storage.state_dir / "log-index"
    demo = settings.logs.dir is None and settings.sources.data_dir is None and "root" not in section
    index_file = location(config.root, fallback, beside=not demo)
    return replace(config, index_file=index_file)


def build_knowledge_search(
    settings: Settings, database: Database
) -> tuple[SemanticKnowledge, SqliteVectorStore]:
    """lookup_knowledge's hybrid search: file vectors in the vector cache, case vectors in the
    database (table case_vector), embeddings from the configured backend (none: BM25 alone)."""
    from evigate.server.sources.retrieval.factory import build_embedder, build_knowledge
    from evigate.server.sources.retrieval.ranking import RankingConfig
    from evigate.server.sources.retrieval.store import RowVectorStore

    cache = SqliteVectorStore(settings.embedding.resolved_vector_cache)
    embedder = build_embedder(
        settings.embedding.backend,
        cache,
        base_url=settings.embedding.base_url,
        model=settings.embedding.model,
        api_key=settings.embedding.api_key,
        dimension=settings.embedding.dimension,
        timeout_s=settings.embedding.timeout_s,
    )
    calibrated = RankingConfig()
    config = RankingConfig(
        l1_threshold=settings.embedding.l1_threshold or calibrated.l1_threshold,
        l1_cross_threshold=settings.embedding.l1_cross_threshold or calibrated.l1_cross_threshold,
    )
    directory = knowledge_dir(settings.sources.data_dir)
    cases = RowVectorStore(database.case_vectors)
    # A failed embedding is retried after twice its timeout: a hung endpoint costs one timeout per
    # period instead of one per lookup.
    retry = 2 * settings.embedding.timeout_s
    return build_knowledge(directory, embedder, cache, cases, config, retry_after_s=retry), cache


def build_names_embedder(settings: Settings) -> Embedder | None:
    """The embedder that resolves a service named in plain words (the configured backend, without
    the knowledge search's centering: the catalog's thresholds are cosines of the model itself)."""
    from evigate.server.sources.retrieval.factory import build_embedder

    e = settings.embedding
    return build_embedder(
        e.backend, base_url=e.base_url, model=e.model, api_key=e.api_key, dimension=e.dimension,
        timeout_s=e.timeout_s, center=False,
    )  # fmt: skip


def start_log_index(sources: SourceSet, on_ready: Callable[[], Awaitable[None]]) -> IndexBuild | None:
    """Starts indexing the log tree of the files source in the background (None: no log tree)."""
    trees = [logs for source in sources.logs if isinstance(logs := getattr(source, "logs", None), LogFiles)]
    if not trees:
        return None
    build = IndexBuild(trees[0].reader(), on_ready=on_ready)
    build.start()
    return build
