"""The case library's embedding vectors (table case_vector, v013), read and written by content.

A vector belongs to a vector space (`model_id`) and to the exact text embedded (`content_hash`,
SHA-256), not to a case id: the retrieval index asks for the texts it lacks and stores what it
embedded. Vectors are opaque bytes here (little-endian float32), stored as base64 text (aiomysql
cannot bind bytes with PyMySQL 1.1); storage knows nothing of numpy or of the models. Two replicas
embedding the same new case both insert; the unique key keeps one row and the other insert is
ignored, so no caller ever sees a conflict.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import cast

from sqlalchemy import Table, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from evigate.storage.models import CaseVector
from evigate.storage.runner import Runner
from evigate.storage.types import utcnow

CASE_VECTOR = cast(Table, CaseVector.__table__)
FLOAT_BYTES = 4
_CHUNK = 500  # keys per SELECT: well inside every driver's parameter limits


class CaseVectors:
    def __init__(self, runner: Runner) -> None:
        self._runner = runner

    async def get(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The stored vectors among `keys` (content hashes); missing ones are absent."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}

        async def work(conn: AsyncConnection) -> dict[str, bytes]:
            found: dict[str, bytes] = {}
            for start in range(0, len(wanted), _CHUNK):
                rows = await conn.execute(
                    select(CASE_VECTOR.c.content_hash, CASE_VECTOR.c.dimension, CASE_VECTOR.c.vector).where(
                        CASE_VECTOR.c.model_id == model_id,
                        CASE_VECTOR.c.content_hash.in_(wanted[start : start + _CHUNK]),
                    )
                )
                for key, dimension, text in rows:
                    try:
                        vector = base64.b64decode(text, validate=True)
                    except (binascii.Error, ValueError):
                        continue  # a foreign or torn row is a miss, not a crash
                    if len(vector) == dimension * FLOAT_BYTES:
                        found[key] = vector
            return found

        return await self._runner.read(work)

    async def put(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
        """Store vectors; a key already stored (by this or another replica) keeps its row."""
        if not vectors:
            return
        now = utcnow()
        rows = [
            {
                "model_id": model_id,
                "content_hash": key,
                "dimension": len(vector) // FLOAT_BYTES,
                "vector": base64.b64encode(vector).decode("ascii"),
                "created_at": now,
            }
            for key, vector in vectors.items()
        ]
        prefix = "IGNORE" if self._runner.is_mysql else "OR IGNORE"

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(insert(CASE_VECTOR).prefix_with(prefix), rows)

        await self._runner.write(work)

    async def count(self, model_id: str | None = None) -> int:
        """How many vectors are stored (of one space), for tests and operations."""

        async def work(conn: AsyncConnection) -> int:
            statement = select(func.count()).select_from(CASE_VECTOR)
            if model_id is not None:
                statement = statement.where(CASE_VECTOR.c.model_id == model_id)
            return int((await conn.execute(statement)).scalar_one())

        return await self._runner.read(work)
