"""The log indexes on disk: one SQLite file per tree, a row per log file keyed by its path and its
identity (device, inode, size, mtime), so that a restart reads back what did not change and
re-indexes only the rest. Each row carries a checksum of its bytes; the file records the format
version and a fingerprint of the reading configuration (field names, patterns, zone, ...). A row
that fails its checksum, a file of another version or configuration, or a file SQLite cannot
read is rebuilt, never trusted. Persistence is best effort: when the store cannot be written the
indexes live in memory only, and queries never fail because of it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
from array import array
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from .events import SkippedLine, SkipReport
from .file_index import Block, FileIndex
from .log_config import LogConfig

log = logging.getLogger("evigate.logs.index")
VERSION = 1  # of what a row holds; a file written by another version is rebuilt
Identity = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS file_index (
    path TEXT PRIMARY KEY, identity TEXT NOT NULL, header TEXT NOT NULL, arrays BLOB NOT NULL,
    checksum TEXT NOT NULL
);
"""
_ARRAYS = ("starts", "lines", "stamps", "levels", "services")
_NOT_INDEXED = ("root", "scan_from_bytes", "index_file")  # settings the indexes do not depend on
# Settings left out of the fingerprint: how the indexes are built, not what they hold.
_NOT_FINGERPRINTED = ("root", "scan_from_bytes", "index_workers", "parallel_from_bytes")


def fingerprint(config: LogConfig) -> str:
    """What the indexes depend on besides the files: every setting of the config but the root."""
    parts = {f.name: getattr(config, f.name) for f in fields(config) if f.name not in _NOT_FINGERPRINTED}
    parts["generic_stems"] = sorted(config.generic_stems)
    parts["fields"] = asdict(config.fields)
    parts["patterns"] = [asdict(p) for p in config.patterns]
    text = json.dumps({"version": VERSION, **parts}, default=repr, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def location(root: Path, fallback: Path, *, beside: bool = True) -> Path:
    """Beside the data when its directory is writable (and `beside`); else one file per tree under
    `fallback` (a read-only mount, the bundled demo inside an installed package)."""
    if beside:
        try:
            probe = root / f".evigate-index-probe-{os.getpid()}-{threading.get_ident()}"
            probe.touch()
            probe.unlink()
            return root / ".evigate-index.sqlite3"
        except OSError:
            pass
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return fallback / f"{digest}.sqlite3"


@dataclass(frozen=True)
class Saved:
    """What a row restores into a FileIndex (the file's format is detected again: it is cheap)."""

    header: dict[str, Any]
    arrays: bytes


class IndexStore:
    """One tree's rows; safe to share between threads (one connection behind a lock)."""

    def __init__(self, path: Path, config: LogConfig) -> None:
        self.path = path
        self._fingerprint = fingerprint(config)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._failed = False

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is not None or self._failed:
            return self._db
        for attempt in (1, 2):
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=5, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
                if row is None or row[0] != self._fingerprint:
                    db.execute("DELETE FROM file_index")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (self._fingerprint,))
                self._db = db
                return db
            except sqlite3.DatabaseError as error:  # not a database, or damaged beyond reading
                if attempt == 1 and "locked" not in str(error):
                    where = {"path": str(self.path), "error": str(error)}
                    log.warning("log index store unreadable: rebuilt", extra=where)
                    self._remove()
                    continue
                self._give_up(error)
            except OSError as error:
                self._give_up(error)
            return None
        return None

    def _remove(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):  # then connecting again fails, and persistence is off
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def _give_up(self, error: Exception) -> None:
        self._failed = True
        log.warning("log index not persisted", extra={"path": str(self.path), "error": str(error)})

    def load(self, path: str, identity: Identity) -> Saved | None:
        with self._lock:
            db = self._connection()
            if db is None:
                return None
            try:
                row = db.execute(
                    "SELECT identity, header, arrays, checksum FROM file_index WHERE path = ?", (path,)
                ).fetchone()
            except sqlite3.DatabaseError as error:
                self._give_up(error)
                return None
        if row is None or row[0] != json.dumps(identity):
            return None
        header_text, arrays, checksum = row[1], bytes(row[2]), row[3]
        if _checksum(header_text, arrays) != checksum:
            log.warning("log index row corrupt: rebuilt", extra={"path": path})
            return None
        try:
            return Saved(json.loads(header_text), arrays)
        except ValueError:
            return None

    def save(self, path: str, identity: Identity, index: FileIndex) -> None:
        self.save_dumped(path, identity, *dump(index))

    def save_dumped(self, path: str, identity: Identity, header: dict[str, Any], arrays: bytes) -> None:
        """save() of an index already dumped (a worker process's, parallel.py)."""
        header_text = json.dumps(header)
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                db.execute(
                    "INSERT OR REPLACE INTO file_index VALUES (?, ?, ?, ?, ?)",
                    (path, json.dumps(identity), header_text, arrays, _checksum(header_text, arrays)),
                )
            except sqlite3.DatabaseError as error:
                self._give_up(error)

    def keep_only(self, paths: set[str]) -> None:
        """Rows of files no longer in the tree go."""
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                stored = {row[0] for row in db.execute("SELECT path FROM file_index")}
                db.executemany("DELETE FROM file_index WHERE path = ?", [(p,) for p in stored - paths])
            except sqlite3.DatabaseError as error:
                self._give_up(error)

    def save_progress(self, progress: dict[str, Any]) -> None:
        """The running build's progress, for `evigate sources` in another process."""
        with self._lock:
            db = self._connection()
            if db is None:
                return
            with contextlib.suppress(sqlite3.DatabaseError):
                db.execute("INSERT OR REPLACE INTO meta VALUES ('progress', ?)", (json.dumps(progress),))

    def load_progress(self) -> dict[str, Any] | None:
        found = self._meta("progress")
        try:
            value = json.loads(found) if found is not None else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def identities(self) -> dict[str, str]:
        """Each stored file's identity (JSON text), by path."""
        with self._lock:
            db = self._connection()
            if db is None:
                return {}
            try:
                return {row[0]: row[1] for row in db.execute("SELECT path, identity FROM file_index")}
            except sqlite3.DatabaseError:
                return {}

    def _meta(self, key: str) -> str | None:
        with self._lock:
            db = self._connection()
            if db is None:
                return None
            try:
                row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError:
                return None
        return None if row is None else str(row[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _checksum(header: str, arrays: bytes) -> str:
    digest = hashlib.blake2b(header.encode(), digest_size=16)
    digest.update(arrays)
    return digest.hexdigest()


def dump(index: FileIndex) -> tuple[dict[str, Any], bytes]:
    sizes, parts = {}, []
    for name in _ARRAYS:
        data = getattr(index, name)
        raw = bytes(data) if isinstance(data, bytearray) else data.tobytes()
        sizes[name] = [data.typecode if isinstance(data, array) else "B", len(raw)]
        parts.append(raw)
    header = {
        "arrays": sizes,
        "service_names": index.service_names,
        "blocks": [
            [b.first, b.end, b.start, b.stop, b.since, b.until, b.levels, sorted(b.services)]
            for b in index.blocks
        ],
        "skipped": [index.skipped.count, [[s.file, s.line, s.reason] for s in index.skipped.first]],
        "flags": [index.escaped, index.joined, index.composed],
    }
    return header, b"".join(parts)


def restore(index: FileIndex, saved: Saved) -> bool:
    """Fills a fresh FileIndex from a row; False when the row does not hold together."""
    header, data = saved.header, saved.arrays
    try:
        at = 0
        for name in _ARRAYS:
            typecode, size = header["arrays"][name]
            chunk = data[at : at + size]
            at += size
            if len(chunk) != size:
                return False
            if name == "levels":
                index.levels = bytearray(chunk)
            else:
                values: array[Any] = array(typecode)
                values.frombytes(chunk)
                setattr(index, name, values)
        index.service_names = [str(name) for name in header["service_names"]]
        index.blocks = [
            Block(int(a), int(b), int(c), int(d), float(e), float(f), int(g), frozenset(int(s) for s in h))
            for a, b, c, d, e, f, g, h in header["blocks"]
        ]
        count, first = header["skipped"]
        index.skipped = SkipReport(int(count), [SkippedLine(str(f), int(n), str(r)) for f, n, r in first],
                                   index.skipped.keep)  # fmt: skip
        index.escaped, index.joined, index.composed = (bool(flag) for flag in header["flags"])
    except (KeyError, TypeError, ValueError):
        return False
    sizes = {len(index.starts), len(index.lines), len(index.levels), len(index.services)}
    return at == len(data) and sizes == {index.count}
