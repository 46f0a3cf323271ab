"""Whichever way a file is read, the answer is the same: the batch indexer builds the index the
line-by-line reader builds; a keyword query answered by scanning files not indexed yet returns the
items, order, total and ref texts the index gives; an index read back from the store answers as
the one built in memory. Over the demo world, the tidewater world, the reader's sample trees and a
generated tree of awkward lines in every format."""

from __future__ import annotations

import gzip
import json
import shutil
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evigate.server.queries.types import LogsQuery, PatternsQuery, TimeWindow
from evigate.server.sources.files.logs import LogFiles
from evigate.server.sources.logs import LogConfig, LogReader, LogSearch, batch, scan
from evigate.server.sources.logs.file_index import build, build_lines, empty, identity
from evigate.server.sources.logs.items import log_item
from evigate.server.sources.logs.layouts import discover
from evigate.server.sources.logs.store import IndexStore
from evigate.server.tools.query_logs import log_text
from evigate.server.tools.summarize_logs import pattern_text

from .readerkit import LOGBACK, PYTHON, SAMPLES

REPO = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 7, 8, 22, 0, tzinfo=UTC)


def _awkward(root: Path) -> Path:
    """Every format with lines the fast path must hand over: stack traces, CRLF, blank and
    non-UTF-8 lines, records without a time or message, aliases, escapes, an overlong line."""
    lines = []
    for i in range(300):
        stamp = (T0 + timedelta(seconds=7 * i)).isoformat(timespec="milliseconds")
        level = ("info", "WARN", "error", "Error", "warning", "30")[i % 6]
        record: dict[str, object] = {"@timestamp": stamp, "level": level, "message": f"job {i} done"}
        if i % 7 == 0:
            record = {"ts": stamp, "severity": level, "msg": f"库存不足 sku={i}", "service": "stock"}
        if i % 11 == 0:
            record = {"time": stamp, "status": 502, "path": f"/api/{i}"}  # no message: composed
        if i % 13 == 0:
            record["level"] = ""
        lines.append(json.dumps(record, ensure_ascii=i % 2 == 0))
        if i % 17 == 0:
            lines.extend(
                ["java.lang.IllegalStateException: boom", "\tat a.B.c(B.java:1)", "Caused by: x.Y: z"]
            )
        if i % 19 == 0:
            lines.extend(["", "   ", "not json at all", '{"level": "info", "msg": "no time"}'])
    (root / "api").mkdir(parents=True)
    (root / "api" / "api.log").write_text("\r\n".join(lines[:150]) + "\n" + "\n".join(lines[150:]))
    kv = []
    for i in range(300):
        stamp = (T0 + timedelta(seconds=5 * i)).isoformat().replace("+00:00", "Z")
        kv.append(
            f'time={stamp} level={("debug", "info", "warn", "")[i % 4]} msg="step {i} \\"quoted\\"" n={i}'
        )
        kv.append(f"ts={stamp} lvl=error message=plain{i}  service=billing extra=a=b")
        if i % 23 == 0:
            kv.append("just words here")
    (root / "billing.log").write_text("\n".join(kv) + "\n")
    text = []
    for i in range(300):
        moment = T0 + timedelta(seconds=3 * i)
        text.append(
            f"{moment:%Y-%m-%d %H:%M:%S}.{i % 1000:03d} {'INFO ' if i % 3 else 'ERROR'} [main] a.B - line {i}"
        )
        if i % 3 == 0:
            text += ["java.sql.SQLException: pool exhausted", "\tat x.Y.z(Y.java:9)", "\t... 4 more"]
    data = ("\n".join(text) + "\n").encode()
    (root / "shop").mkdir()
    (root / "shop" / "app.log").write_bytes(
        data[:5000] + b"\xff\xfe broken\n" + b"x" * (2**20 + 5) + b"\n" + data[5000:]
    )
    (root / "shop" / "app.log.1.gz").write_bytes(gzip.compress(data))
    return root


TREES = {
    "demo": lambda tmp: REPO / "server" / "demo" / "logs",
    "tidewater": lambda tmp: REPO / "tests" / "worlds" / "tidewater" / "logs",
    "plain": lambda tmp: SAMPLES / "plain",
    "same": lambda tmp: SAMPLES / "same",
    "awkward": _awkward,
}


def _config(root: Path, **options: object) -> LogConfig:
    return LogConfig(root=root, patterns=(LOGBACK, PYTHON), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("tree", [*TREES, "k8s", "docker"])
@pytest.mark.parametrize(("chunk", "block_events"), [(batch.CHUNK, 2048), (997, 7)])
def test_the_batch_indexer_builds_the_line_by_line_index(
    tree: str, chunk: int, block_events: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small chunks and blocks: runs of lines read by a lane are cut by chunk ends and by blocks.
    monkeypatch.setattr(batch, "CHUNK", chunk)
    root = TREES[tree](tmp_path) if tree in TREES else SAMPLES / tree
    config = _config(root, block_events=block_events)
    files = 0
    for source in discover(config):
        for member in source.members:
            fast = build(source, member, config)
            slow = build_lines(empty(source, member, config, identity(member.path)), config)
            assert fast is not None
            for name in ("starts", "lines", "stamps", "levels", "services", "service_names", "blocks"):
                assert getattr(fast, name) == getattr(slow, name), (member.rel, name)
            assert (fast.skipped.count, fast.skipped.first) == (slow.skipped.count, slow.skipped.first)
            assert (fast.joined, fast.composed) == (slow.joined, slow.composed)
            files += 1
    assert files


def _queries(root: Path) -> list[LogSearch]:
    words = {
        "demo": ["HikariCP", "timeout", "Connection", "支付"],
        "tidewater": ["consumer", "lag", "error", "smtp"],
    }
    common = ["error", "job", "pool", "line 1", "step", "库存", "o1002", "=", "zzz-none"]
    keywords = [*words.get(root.name, []), *common]
    reader = LogReader(_config(root))
    services = sorted({e.service for e in reader.search(LogSearch(limit=100_000)).events})
    window = TimeWindow(T0 + timedelta(minutes=10), T0 + timedelta(minutes=20))
    queries = [LogSearch(keyword=k, limit=15) for k in keywords]
    queries += [LogSearch(service=s, keyword=k, limit=5) for s in services[:4] for k in keywords[:4]]
    queries += [LogSearch(keyword=k, level=lv, limit=50) for k in keywords[:3] for lv in ("ERROR", "WARN")]
    queries += [LogSearch(keyword=k, window=window, regex=r"\d", limit=10) for k in keywords[:5]]
    return queries


def _answer(reader: LogReader, query: LogSearch) -> tuple[int, list[dict[str, str]], list[str]]:
    result = reader.search(query)
    items = [log_item(event) for event in result.events]
    return result.total, items, [log_text(item) for item in items]


@pytest.mark.parametrize("tree", [*TREES, "k8s", "docker"])
@pytest.mark.parametrize("chunk", [997, scan.CHUNK])
def test_a_scan_before_indexing_answers_as_the_index(
    tree: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "CHUNK", chunk)  # small: events cut at chunk ends are held back whole
    root = TREES[tree](tmp_path) if tree in TREES else SAMPLES / tree
    indexed = LogReader(_config(root))
    indexed.build_all()
    scanned_some = False
    files = indexed.tree.held()
    for query in _queries(root):
        scanning = LogReader(_config(root, scan_from_bytes=0))  # nothing indexed: every file it can scan
        assert _answer(scanning, query) == _answer(indexed, query), query
        scanned_some = scanned_some or scanning.tree.held() < files
    # Files were scanned, not indexed (container-wrapped ones never are: a runtime's partial
    # records may split a line, so theirs come from the index either way).
    assert scanned_some or tree not in TREES


@pytest.mark.parametrize("tree", ["demo", "tidewater", "awkward"])
def test_an_index_read_back_from_the_store_answers_as_the_one_built(tree: str, tmp_path: Path) -> None:
    source = TREES[tree](tmp_path)
    root = tmp_path / "copy"
    shutil.copytree(source, root)
    config = _config(root)
    built = LogFiles(config, LogReader(config, IndexStore(tmp_path / "index.sqlite3", config)))
    progress = built.reader().build_all()
    assert progress.state == "ready" and progress.bytes_built == progress.bytes_total
    again = LogReader(config, IndexStore(tmp_path / "index.sqlite3", config))
    assert again.build_all().bytes_built == 0  # nothing changed: nothing read
    restored = LogFiles(config, again)
    window = TimeWindow(None, None)
    for level in (None, "WARN", "ERROR"):
        for service in (None, *built.services()[:3]):
            summary = PatternsQuery(service, level, window, 10)
            pages = built.summarize(summary), restored.summarize(summary)
            assert [pattern_text(i) for i in pages[0].items] == [pattern_text(i) for i in pages[1].items]
            logs = LogsQuery(service, level, None, None, window, 30)
            pages = built.query(logs), restored.query(logs)
            assert pages[0].items == pages[1].items and pages[0].total == pages[1].total
            assert pages[0].extra == pages[1].extra


def _tree_with_two_files(root: Path) -> LogConfig:
    for name in ("a", "b"):
        lines = [
            json.dumps(
                {"time": (T0 + timedelta(seconds=i)).isoformat(), "level": "info", "msg": f"{name} {i}"}
            )
            for i in range(50)
        ]
        (root / f"{name}.log").write_text("\n".join(lines) + "\n")
    return LogConfig(root=root)


def test_a_restart_reads_only_the_files_that_changed(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    config = _tree_with_two_files(root)
    store = tmp_path / "index.sqlite3"
    assert (
        LogReader(config, IndexStore(store, config)).build_all().bytes_built
        == 2 * (root / "a.log").stat().st_size
    )
    with (root / "b.log").open("a") as handle:
        handle.write(json.dumps({"time": T0.isoformat(), "level": "error", "msg": "b late"}) + "\n")
    progress = LogReader(config, IndexStore(store, config)).build_all()
    assert progress.bytes_built == (root / "b.log").stat().st_size
    assert progress.files_done == 2 and progress.state == "ready"


def test_a_corrupt_or_foreign_index_is_rebuilt_never_trusted(tmp_path: Path) -> None:
    import sqlite3

    root = tmp_path / "logs"
    root.mkdir()
    config = _tree_with_two_files(root)
    store = tmp_path / "index.sqlite3"
    expected = _answer(LogReader(config), LogSearch(limit=200))
    size = 2 * (root / "a.log").stat().st_size
    LogReader(config, IndexStore(store, config)).build_all()
    with sqlite3.connect(store) as db:  # flip bytes inside one row: its checksum no longer holds
        db.execute("UPDATE file_index SET arrays = zeroblob(length(arrays)) WHERE path = 'a.log'")
    reader = LogReader(config, IndexStore(store, config))
    assert reader.build_all().bytes_built == size // 2
    assert _answer(reader, LogSearch(limit=200)) == expected
    other = LogConfig(root=root, default_level="WARN")  # another configuration: every row is stale
    assert LogReader(other, IndexStore(store, other)).build_all().bytes_built == size
    store.write_bytes(b"not a database at all" * 100)
    reader = LogReader(config, IndexStore(store, config))
    assert reader.build_all().bytes_built == size
    assert _answer(reader, LogSearch(limit=200)) == expected


def test_an_index_that_cannot_be_written_leaves_the_queries_answering(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    config = _tree_with_two_files(root)
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the store's folder would be")
    reader = LogReader(config, IndexStore(blocked / "index.sqlite3", config))
    assert reader.build_all().state == "ready"
    assert _answer(reader, LogSearch(limit=200)) == _answer(LogReader(config), LogSearch(limit=200))


@pytest.mark.parametrize("tree", ["tidewater", "awkward", "k8s"])
def test_an_index_built_by_worker_processes_is_the_one_built_in_the_thread(tree: str, tmp_path: Path) -> None:
    root = TREES[tree](tmp_path) if tree in TREES else SAMPLES / tree
    here = LogReader(_config(root, index_workers=1))
    assert here.build_all().state == "ready"
    store = tmp_path / "index.sqlite3"
    config = _config(root, index_workers=2, parallel_from_bytes=0)
    apart = LogReader(config, IndexStore(store, config))
    progress = apart.build_all()
    assert progress.state == "ready" and progress.files_done == progress.files_total
    assert progress.bytes_done == progress.bytes_built == progress.bytes_total
    ours, theirs = here.refresh().indexes, apart.refresh().indexes
    assert [i.member.rel for i in ours] == [i.member.rel for i in theirs]
    for fast, slow in zip(ours, theirs, strict=True):
        for name in ("starts", "lines", "stamps", "levels", "services", "service_names", "blocks", "stamp"):
            assert getattr(fast, name) == getattr(slow, name), (fast.member.rel, name)
        assert (fast.skipped.count, fast.skipped.first) == (slow.skipped.count, slow.skipped.first)
        assert (fast.escaped, fast.joined, fast.composed) == (slow.escaped, slow.joined, slow.composed)
    assert LogReader(config, IndexStore(store, config)).build_all().bytes_built == 0  # saved as built
    for query in _queries(root)[:6]:
        assert _answer(apart, query) == _answer(here, query), query


def test_a_build_in_worker_processes_stops_when_asked_and_queries_still_answer(tmp_path: Path) -> None:
    root = _awkward(tmp_path)
    config = _config(root, index_workers=2, parallel_from_bytes=0)
    reader = LogReader(config)
    files = len(reader.tree.files())
    calls = 0

    def stop() -> bool:  # no to each file before the workers start, yes at the first look after
        nonlocal calls
        calls += 1
        return calls > files

    progress = reader.build_all(stop)
    assert progress.state == "stopped"
    assert _answer(reader, LogSearch(limit=500)) == _answer(LogReader(_config(root)), LogSearch(limit=500))


def test_workers_wait_while_a_query_runs(tmp_path: Path) -> None:
    root = _awkward(tmp_path)
    reader = LogReader(_config(root, index_workers=2, parallel_from_bytes=0))
    expected = _answer(LogReader(_config(root)), LogSearch(limit=500))
    with reader.tree.querying():  # the build starts during a query: its workers wait for its end
        waiting = threading.Thread(target=reader.build_all)
        waiting.start()
        waiting.join(timeout=3)
        assert waiting.is_alive() and reader.progress.bytes_built == 0
        assert _answer(reader, LogSearch(limit=500)) == expected
    waiting.join(timeout=120)
    assert reader.progress.state == "ready"
