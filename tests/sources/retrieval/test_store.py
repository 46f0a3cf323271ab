"""Vector stores: what is put is found again, also from a new process's view of the same file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from evigate.server.sources.retrieval.store import MemoryVectorStore, SqliteVectorStore, VectorStoreError


async def test_sqlite_store_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "vectors.sqlite3"
    vector = (np.arange(4) / 10).astype(np.float32)
    first = SqliteVectorStore(path)
    await first.put("model-a", {"h1": vector})
    first.close()
    second = SqliteVectorStore(path)
    found = await second.get("model-a", ["h1", "h2"])
    assert list(found) == ["h1"]
    np.testing.assert_array_equal(found["h1"], vector)
    assert await second.get("model-b", ["h1"]) == {}  # vectors of another model never mix
    second.close()


async def test_sqlite_store_treats_a_torn_row_as_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    store = SqliteVectorStore(path)
    await store.put("m", {"good": np.ones(3, dtype=np.float32)})
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO vectors VALUES ('m', 'torn', 3, ?)", (b"\x00" * 5,))
    assert set(await store.get("m", ["good", "torn"])) == {"good"}
    store.close()


async def test_memory_store_keys_by_model_and_hash() -> None:
    store = MemoryVectorStore()
    await store.put("m", {"h": np.zeros(2, dtype=np.float32)})
    assert set(await store.get("m", ["h", "x"])) == {"h"}
    assert await store.get("other", ["h"]) == {}
    assert len(store) == 1


async def test_an_unusable_cache_file_raises_the_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    store = SqliteVectorStore(blocker / "vectors.sqlite3")
    with pytest.raises(VectorStoreError, match="unreadable"):
        await store.get("m", ["h"])
