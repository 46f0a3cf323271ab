"""The viewer's pages. Each handler checks who is asking (server.web.auth), calls one use case —
the same objects the gRPC servicers call — and renders a template; nothing here writes but the
feedback form, through the Feedback use case."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.records import InvalidPageToken, NoAnswer, SessionNotFound, TraceRecord
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.web import auth, listing, views
from evigate.server.web.cases import case_rows

TEMPLATES = Path(__file__).resolve().parent / "templates"
FEEDBACK_WORDS = ("useful", "not_useful")
MAX_SESSION_ID = 128


@dataclass(frozen=True)
class UseCases:
    traces: TraceUseCase
    feedback: FeedbackUseCase
    cases: CaseUseCase


def environment() -> jinja2.Environment:
    # Autoescape everything: every text on these pages may come from a log line or a model.
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )
    env.filters["urlencode_query"] = urlencode
    return env


class Viewer:
    def __init__(self, use_cases: UseCases, tokens: auth.TokenCheck, skills: list[str]) -> None:
        self._uc = use_cases
        self._tokens = tokens
        self._skills = skills
        self._env = environment()

    # -- helpers --------------------------------------------------------------------------------
    def _authenticated(self, request: Request) -> bool:
        if not self._tokens.enabled:
            return True
        if self._tokens.valid_header(request.headers.get("authorization")):
            return True
        return self._tokens.valid_session(request.cookies.get(auth.SESSION_COOKIE))

    def _denied(self, request: Request) -> Response:
        """A browser goes to the login form; a call with a (wrong) Authorization header gets 401."""
        if "authorization" in request.headers or request.method != "GET":
            return PlainTextResponse(
                "a valid token is needed", status_code=401, headers={"WWW-Authenticate": "Bearer"}
            )
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?{urlencode({'next': target})}", status_code=303)

    def _render(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        csrf = request.cookies.get(auth.CSRF_COOKIE) or auth.new_csrf_value()
        body = self._env.get_template(name).render(
            csrf=csrf, auth_enabled=self._tokens.enabled, path=request.url.path, **context
        )
        response = HTMLResponse(body, status_code=status)
        if request.cookies.get(auth.CSRF_COOKIE) != csrf:
            self._cookie(request, response, auth.CSRF_COOKIE, csrf)
        return response

    @staticmethod
    def _cookie(
        request: Request, response: Response, name: str, value: str, max_age: int | None = None
    ) -> None:
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )

    async def _form_checked(self, request: Request) -> tuple[dict[str, str], Response | None]:
        """The POSTed form, or the refusal of a request that fails the CSRF check."""
        form = await request.form()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        if self._tokens.valid_header(request.headers.get("authorization")):
            return fields, None
        if not auth.same_origin(request.headers.get("origin"), request.headers.get("host")):
            return fields, PlainTextResponse("cross-site request refused", status_code=403)
        if not auth.csrf_matches(request.cookies.get(auth.CSRF_COOKIE), fields.get("csrf")):
            return fields, PlainTextResponse("missing or wrong CSRF token; reload the page", status_code=403)
        return fields, None

    def _not_found(self, request: Request, what: str) -> HTMLResponse:
        return self._render(request, "error.html", status=404, title="Not found", message=what)

    # -- pages ----------------------------------------------------------------------------------
    async def home(self, request: Request) -> Response:
        return RedirectResponse("/sessions", status_code=303)

    async def sessions(self, request: Request) -> Response:
        if not self._authenticated(request):
            return self._denied(request)
        filters = listing.Filters.parse(dict(request.query_params))
        token = request.query_params.get("page") or None
        try:
            page = await listing.find_sessions(self._uc.traces, filters, token)
        except InvalidPageToken:
            return self._render(
                request, "error.html", status=400, title="Bad page", message="that page link is not valid"
            )
        next_query = {**filters.query(), "page": page.next_token} if page.next_token else None
        return self._render(
            request,
            "sessions.html",
            sessions=page.sessions,
            filters=filters,
            next_query=next_query,
            statuses=listing.STATUSES,
            verdicts=listing.VERDICTS,
            feedbacks=listing.FEEDBACKS,
            skills=self._skills,
            verdict_of=views.verdict_of,
        )

    async def _trace(self, request: Request) -> TraceRecord | None:
        session_id = request.path_params["session_id"]
        if not session_id or len(session_id) > MAX_SESSION_ID:
            return None
        try:
            return await self._uc.traces.get(session_id, lambda record: record)
        except SessionNotFound:
            return None

    async def session(self, request: Request) -> Response:
        if not self._authenticated(request):
            return self._denied(request)
        record = await self._trace(request)
        if record is None:
            return self._not_found(request, "no session has this id")
        notice = {"recorded": "Feedback recorded.", "refused": "This session has no answer to judge."}
        return self._render(
            request,
            "session.html",
            page=views.session_page(record),
            notice=notice.get(request.query_params.get("feedback", ""), ""),
        )

    async def call_result(self, request: Request) -> Response:
        """One call's whole result as JSON text (the page shows a preview)."""
        if not self._authenticated(request):
            return self._denied(request)
        record = await self._trace(request)
        call_id = request.path_params["call_id"]
        call = next((i for i in record.invocations if i.id == call_id), None) if record else None
        if call is None:
            return PlainTextResponse("no such tool call", status_code=404)
        text = json.dumps(call.raw_result, ensure_ascii=False, indent=1, default=str)
        return Response(text, media_type="application/json; charset=utf-8")

    async def feedback(self, request: Request) -> Response:
        if not self._authenticated(request):
            return self._denied(request)
        fields, refused = await self._form_checked(request)
        if refused is not None:
            return refused
        session_id = request.path_params["session_id"]
        word = fields.get("feedback", "")
        if word not in FEEDBACK_WORDS or not session_id or len(session_id) > MAX_SESSION_ID:
            return PlainTextResponse("feedback must be useful or not_useful", status_code=400)
        outcome = "recorded"
        try:
            await self._uc.feedback.submit(session_id, word)
        except SessionNotFound:
            return self._not_found(request, "no session has this id")
        except NoAnswer:
            outcome = "refused"
        # Post/redirect/get: reloading the page does not submit again.
        target = f"/sessions/{quote(session_id, safe='')}?feedback={outcome}#feedback"
        return RedirectResponse(target, status_code=303)

    async def cases(self, request: Request) -> Response:
        if not self._authenticated(request):
            return self._denied(request)
        return self._render(request, "cases.html", cases=await case_rows(self._uc.cases))

    async def login_form(self, request: Request) -> Response:
        if not self._tokens.enabled:
            return RedirectResponse("/sessions", status_code=303)
        return self._render(
            request, "login.html", next=auth.local_path(request.query_params.get("next")), error=""
        )

    async def login(self, request: Request) -> Response:
        if not self._tokens.enabled:
            return RedirectResponse("/sessions", status_code=303)
        fields, refused = await self._form_checked(request)
        if refused is not None:
            return refused
        target = auth.local_path(fields.get("next"))
        token = fields.get("token", "")
        if not self._tokens.valid_token(token):
            return self._render(
                request, "login.html", status=401, next=target, error="That token is not valid."
            )
        response = RedirectResponse(target, status_code=303)
        self._cookie(
            request, response, auth.SESSION_COOKIE, self._tokens.session_value(token), auth.SESSION_TTL_S
        )
        return response

    async def logout(self, request: Request) -> Response:
        _, refused = await self._form_checked(request)
        if refused is not None:
            return refused
        response = RedirectResponse("/login" if self._tokens.enabled else "/sessions", status_code=303)
        response.delete_cookie(auth.SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return response
