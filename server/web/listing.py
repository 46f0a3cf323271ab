"""The session list's filters. Status and feedback are filtered by the store (ListSessions, the
same use case as the gRPC API); verdict, skill, "no feedback" and text in the question are checked
here, on the store's pages, reading on until a page of the list is full or SCAN_PAGES store pages
were read — so a page may be short, and the next one goes on where this one stopped reading."""

from __future__ import annotations

from dataclasses import dataclass

from evigate.server.usecases.records import SessionRecord
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.web.views import verdict_of

PAGE_SIZE = 50
SCAN_PAGES = 10
STATUSES = ("RUNNING", "SUCCESS", "FAILED", "AGENT")
VERDICTS = ("PASS", "LOW_CONFID", "REJECT")
FEEDBACKS = ("useful", "not_useful", "none")


@dataclass(frozen=True, slots=True)
class Filters:
    status: str = ""
    verdict: str = ""
    skill: str = ""
    feedback: str = ""
    text: str = ""

    @classmethod
    def parse(cls, params: dict[str, str]) -> Filters:
        """Unknown words are dropped (an empty filter), never an error page."""

        def pick(name: str, allowed: tuple[str, ...]) -> str:
            value = params.get(name, "").strip()
            return value if value in allowed else ""

        return cls(
            status=pick("status", STATUSES),
            verdict=pick("verdict", VERDICTS),
            skill=params.get("skill", "").strip()[:200],
            feedback=pick("feedback", FEEDBACKS),
            text=params.get("q", "").strip()[:500],
        )

    def query(self) -> dict[str, str]:
        """The filters as URL parameters (for the next page's link)."""
        pairs = {
            "status": self.status,
            "verdict": self.verdict,
            "skill": self.skill,
            "feedback": self.feedback,
            "q": self.text,
        }
        return {k: v for k, v in pairs.items() if v}

    def keeps(self, session: SessionRecord) -> bool:
        if self.verdict and verdict_of(session.self_evaluation) != self.verdict:
            return False
        if self.skill and (session.planner_plan or {}).get("selected_skill") != self.skill:
            return False
        if self.feedback == "none" and session.feedback is not None:
            return False
        return not self.text or self.text.casefold() in session.query.casefold()


@dataclass(frozen=True, slots=True)
class Page:
    sessions: list[SessionRecord]
    next_token: str | None


async def find_sessions(
    traces: TraceUseCase, filters: Filters, token: str | None, page_size: int = PAGE_SIZE
) -> Page:
    store_feedback = filters.feedback if filters.feedback in ("useful", "not_useful") else None
    found: list[SessionRecord] = []
    for _ in range(SCAN_PAGES):
        sessions, token = await traces.list_sessions(store_feedback, filters.status or None, page_size, token)
        found.extend(s for s in sessions if filters.keeps(s))
        if token is None or len(found) >= page_size:
            break
    return Page(found, token)
