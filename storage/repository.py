"""The repository that speaks the domain: one object, one job per mixin. Each public method is one
transaction (storage.runner).

- storage.sessions (SessionStore): diagnosis_session rows, outcome, evidence score, list.
- storage.invocations (InvocationStore): tool invocations, Verifier rounds, the trace.
- storage.feedback (FeedbackStore): feedback and the case library.
- storage.jobs (JobQueue): the durable job queue.
- storage.cases (CaseStore): structured cases (fault category, error code, services, alerts).
- storage.opinions (OpinionStore): the LLM opinion beside the evidence score.

New storage code goes in a new module with its own mixin, added to the bases below.
"""

from __future__ import annotations

from evigate.storage.cases import CaseStore
from evigate.storage.feedback import (
    FEEDBACK_VALUES,
    KNOWN_CASE_IDS,
    NOT_USEFUL,
    TITLE_CHARS,
    USEFUL,
    FeedbackStore,
)
from evigate.storage.invocations import InvocationStore
from evigate.storage.jobs import JobQueue
from evigate.storage.opinions import OpinionStore
from evigate.storage.runner import Runner
from evigate.storage.sessions import (
    DEFAULT_PAGE_SIZE,
    FAILED,
    MAX_PAGE_SIZE,
    RUNNING,
    SESSION_ID_CHARS,
    SUCCESS,
    TEXT_CHARS,
    SessionStore,
)

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FAILED",
    "FEEDBACK_VALUES",
    "KNOWN_CASE_IDS",
    "MAX_PAGE_SIZE",
    "NOT_USEFUL",
    "RUNNING",
    "SESSION_ID_CHARS",
    "SUCCESS",
    "TEXT_CHARS",
    "TITLE_CHARS",
    "USEFUL",
    "Repository",
]


class Repository(SessionStore, InvocationStore, FeedbackStore, JobQueue, CaseStore, OpinionStore):
    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._case_ids = {}
