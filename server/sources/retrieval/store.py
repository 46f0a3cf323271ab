"""Where vectors live between runs: keyed by (model id, content hash), storage-agnostic.

A vector depends only on the model and the exact text embedded, so the content hash of that text is
the whole key: an unchanged block is found again after a restart or on another replica, a changed
one misses and is embedded once. Two implementations: in memory (tests, one-shot tools) and a
SQLite file beside the knowledge files (WAL mode, so several processes share one cache safely).
The case library's vectors go to the service database through the same protocol.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from evigate.rules.errors import EvigateError

Vector = npt.NDArray[np.float32]


class VectorStoreError(EvigateError):
    """The store cannot be read or written; callers carry on without the cache."""


class VectorStore(Protocol):
    async def get(self, model_id: str, keys: Sequence[str]) -> dict[str, Vector]:
        """The stored vectors among `keys` (missing keys are simply absent); VectorStoreError when
        the store cannot be read."""
        ...

    async def put(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        """Store vectors (replacing any under the same key); VectorStoreError on failure."""
        ...


class VectorRows(Protocol):
    """A table of float32 blobs keyed like a VectorStore: storage's CaseVectors (table case_vector)."""

    async def get(self, model_id: str, keys: Sequence[str]) -> Mapping[str, bytes]: ...

    async def put(self, model_id: str, vectors: Mapping[str, bytes]) -> None: ...


class RowVectorStore:
    """A VectorStore over VectorRows (the service database for the case library). Any failure of
    the database is a VectorStoreError: the index then embeds without the cache, the lookup goes on."""

    def __init__(self, rows: VectorRows) -> None:
        self._rows = rows

    async def get(self, model_id: str, keys: Sequence[str]) -> dict[str, Vector]:
        try:
            found = await self._rows.get(model_id, keys)
        except Exception as exc:  # storage's errors are not ours to name; none may reach the lookup
            raise VectorStoreError(f"case vectors unreadable: {type(exc).__name__}: {exc}") from exc
        return {k: np.frombuffer(v, dtype="<f4").astype(np.float32) for k, v in found.items()}

    async def put(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        blobs = {k: np.asarray(v, dtype="<f4").tobytes() for k, v in vectors.items()}
        try:
            await self._rows.put(model_id, blobs)
        except Exception as exc:
            raise VectorStoreError(f"case vectors unwritable: {type(exc).__name__}: {exc}") from exc


class MemoryVectorStore:
    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Vector] = {}

    async def get(self, model_id: str, keys: Sequence[str]) -> dict[str, Vector]:
        return {k: self._data[(model_id, k)] for k in keys if (model_id, k) in self._data}

    async def put(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        for key, vector in vectors.items():
            self._data[(model_id, key)] = np.asarray(vector, dtype=np.float32)

    def __len__(self) -> int:
        return len(self._data)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,  -- little-endian float32, `dimension` values
    PRIMARY KEY (model_id, content_hash)
)
"""
_CHUNK = 500  # SQLite's bound-parameter limit is far above; this keeps each statement small


class SqliteVectorStore:
    """One SQLite file; the blocking calls run in a worker thread so the event loop never waits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            conn.commit()
            self._conn = conn
        return self._conn

    def _get_sync(self, model_id: str, keys: Sequence[str]) -> dict[str, Vector]:
        found: dict[str, Vector] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT content_hash, dimension, vector FROM vectors "
                    f"WHERE model_id = ? AND content_hash IN ({marks})",
                    [model_id, *chunk],
                )
                for key, dim, blob in rows:
                    if len(blob) == 4 * dim:  # a torn or foreign row is a miss, not a crash
                        found[key] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
        return found

    def _put_sync(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        rows = [
            (model_id, key, int(v.shape[0]), np.asarray(v, dtype="<f4").tobytes())
            for key, v in vectors.items()
        ]
        with self._lock:
            conn = self._connection()
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            conn.commit()

    async def get(self, model_id: str, keys: Sequence[str]) -> dict[str, Vector]:
        if not keys:
            return {}
        try:
            return await asyncio.to_thread(self._get_sync, model_id, keys)
        except (sqlite3.Error, OSError) as exc:
            raise VectorStoreError(f"vector cache {self.path} unreadable: {exc}") from exc

    async def put(self, model_id: str, vectors: Mapping[str, Vector]) -> None:
        if vectors:
            try:
                await asyncio.to_thread(self._put_sync, model_id, vectors)
            except (sqlite3.Error, OSError) as exc:
                raise VectorStoreError(f"vector cache {self.path} unwritable: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
