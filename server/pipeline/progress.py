"""What a session has done so far (stage latencies, prompt versions, round evaluations, where it
is): recorded on SUCCESS and on FAILED alike."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.server.agents.base import StageNote

JSON = dict[str, Any]


@dataclass
class Progress:
    """What a session has done so far: recorded on SUCCESS and on FAILED alike."""

    latencies: list[JSON] = field(default_factory=list)
    prompt_versions: dict[str, str] = field(default_factory=dict)
    rounds: list[JSON] = field(default_factory=list)
    notes: list[JSON] = field(default_factory=list)  # StageNotes with their stage and round
    stage: str = "start"
    round: int = 0

    @contextlib.contextmanager
    def stage_of(self, name: str, round_number: int = 0) -> Iterator[None]:
        self.stage, self.round = name, round_number
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - start) * 1000
            self.latencies.append({"stage": name, "round": round_number, "latency_ms": round(elapsed, 3)})

    def where(self) -> str:
        return f"{self.stage} (round {self.round})" if self.round else self.stage

    def version(self, stage: str, prompt_version: str | None) -> None:
        if prompt_version:
            self.prompt_versions[stage] = prompt_version

    def note(self, stage: str, round_number: int, notes: Sequence[StageNote]) -> None:
        self.notes.extend(
            {"stage": stage, "round": round_number, "kind": n.kind, "detail": n.detail} for n in notes
        )

    def extras(self) -> JSON:
        return {
            "stage_latencies": self.latencies,
            "prompt_versions": self.prompt_versions,
            "verifier_evaluation_rounds": self.rounds,
            "stage_notes": self.notes,
        }
