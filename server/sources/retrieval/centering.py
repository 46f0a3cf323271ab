"""Language centering: subtract each language's mean vector so Chinese and English texts meet.

Small multilingual encoders keep a strong language component: with multilingual-e5-small a Chinese
question about MySQL replication sits closer to a Chinese note about disks than to the English
replication runbook, and every cosine lies between 0.75 and 0.9. Subtracting the mean vector of the
text's language (estimated on parallel sentences, `anchors.PAIRS`, separately for queries and
passages since the e5 prefixes shift them) removes that shared component; what is left is mostly
topic. Mixed text (a Chinese sentence full of English identifiers) subtracts a blend weighted by its
share of Chinese characters. The wrapped embedder is itself an `Embedder` with its own model id, so
its vectors are cached apart from raw ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .anchors import PAIRS
from .embedder import Embedder, EmbedKind, Vectors, normalise
from .store import VectorStore, VectorStoreError

CENTERING_VERSION = "center-v1"  # bump when the anchors or the formula change: cached vectors expire
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z]+")
_KINDS: tuple[EmbedKind, ...] = ("query", "passage")
# The default model's means, shipped (scripts/anchor_means.py writes them): a first start with an
# empty cache then embeds only the knowledge itself, not the 160 anchor sentences as well.
SHIPPED_MEANS = Path(__file__).with_name("anchor_means.json")


def shipped_means(space: str) -> dict[str, npt.NDArray[np.float32]]:
    try:
        spaces = json.loads(SHIPPED_MEANS.read_text(encoding="utf-8"))["spaces"]
    except (OSError, ValueError, KeyError):
        return {}
    return {k: np.asarray(v, dtype=np.float32) for k, v in spaces.get(space, {}).items()}


def chinese_share(text: str) -> float:
    """Share of Chinese in a text: CJK characters against Latin words (a word is about one CJK
    character's worth of tokens, and of meaning)."""
    cjk = len(_CJK.findall(text))
    words = len(_WORD.findall(text))
    return cjk / (cjk + words) if cjk + words else 0.0


class CenteredEmbedder:
    def __init__(self, inner: Embedder, store: VectorStore | None = None) -> None:
        self._inner = inner
        self._store = store
        self._means: dict[EmbedKind, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] = {}
        self._lock = asyncio.Lock()

    @property
    def model_id(self) -> str:
        return f"{self._inner.model_id}+{CENTERING_VERSION}"

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        raw = await self._inner.embed(texts, kind)
        en_mean, zh_mean = await self._language_means(kind)
        share = np.array([chinese_share(t) for t in texts], dtype=np.float32)[:, None]
        return normalise(raw - (1 - share) * en_mean - share * zh_mean)

    async def _language_means(
        self, kind: EmbedKind
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        async with self._lock:
            if not self._means:
                await self._load_means()
            return self._means[kind]

    async def _load_means(self) -> None:
        """Both kinds at once, so a process that only indexed still leaves the query means cached."""
        space = f"{self._inner.model_id}#anchors-{CENTERING_VERSION}"
        keys = [f"{kind}-{lang}" for kind in _KINDS for lang in ("en", "zh")]
        cached = shipped_means(space)
        if len(cached) != len(keys):
            cached = await self._cached(space, keys)
        if len(cached) != len(keys):
            cached = {}
            for kind in _KINDS:
                english = await self._inner.embed([en for en, _ in PAIRS], kind)
                chinese = await self._inner.embed([zh for _, zh in PAIRS], kind)
                cached[f"{kind}-en"] = english.mean(axis=0).astype(np.float32)
                cached[f"{kind}-zh"] = chinese.mean(axis=0).astype(np.float32)
            if self._store:
                # Without the cache the next process recomputes them; the index logs store failures.
                with contextlib.suppress(VectorStoreError):
                    await self._store.put(space, cached)
        self._means = {kind: (cached[f"{kind}-en"], cached[f"{kind}-zh"]) for kind in _KINDS}

    async def _cached(self, space: str, keys: list[str]) -> dict[str, npt.NDArray[np.float32]]:
        if self._store is None:
            return {}
        try:
            return await self._store.get(space, keys)
        except VectorStoreError:
            return {}
