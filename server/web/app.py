"""The viewer's Starlette application and the uvicorn server that runs it inside the service's
own event loop (started and stopped by server.app, next to the gRPC server)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from evigate.server.asgi_server import AsgiServer
from evigate.server.settings import Settings, web_address
from evigate.server.usecases.cases import CaseUseCase
from evigate.server.usecases.feedback import FeedbackUseCase
from evigate.server.usecases.ports import SessionStore
from evigate.server.usecases.records import DatabaseUnavailable
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.web import auth
from evigate.server.web.routes import UseCases, Viewer
from evigate.server.web.security import SecurityHeaders

STATIC = Path(__file__).resolve().parent / "static"
log = logging.getLogger("evigate.web")


async def _unavailable(request: Request, error: Exception) -> Response:
    return PlainTextResponse("the database is not reachable; try again shortly", status_code=503)


def build_app(use_cases: UseCases, tokens: auth.TokenCheck, skills: list[str]) -> Starlette:
    viewer = Viewer(use_cases, tokens, skills)
    routes = [
        Route("/", viewer.home),
        Route("/sessions", viewer.sessions),
        Route("/sessions/{session_id}", viewer.session),
        Route("/sessions/{session_id}/feedback", viewer.feedback, methods=["POST"]),
        Route("/sessions/{session_id}/calls/{call_id:int}/result", viewer.call_result),
        Route("/cases", viewer.cases),
        Route("/login", viewer.login_form, methods=["GET"]),
        Route("/login", viewer.login, methods=["POST"]),
        Route("/logout", viewer.logout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={DatabaseUnavailable: _unavailable})
    app.add_middleware(SecurityHeaders)
    return app


def web_server(
    store: SessionStore,
    cases: CaseUseCase,
    settings: Settings,
    invalidate: Callable[[str], None],
    skills: list[str],
) -> WebServer:
    """The viewer as server.app builds it: the use-case classes the gRPC servicers get, over the
    same store; `invalidate` drops a session's cached GetTrace reply after feedback given here."""
    use_cases = UseCases(
        traces=TraceUseCase(store),
        feedback=FeedbackUseCase(store, invalidate, cases),
        cases=cases,
    )
    app = build_app(use_cases, auth.TokenCheck(settings.auth.tokens), skills)
    host, port = web_address(settings.web.address)
    return WebServer(app, host, port, settings.grpc.grace_period_s)


class WebServer(AsgiServer):
    """The viewer's app on its own socket, in the service's loop."""

    def __init__(self, app: Starlette, host: str, port: int, grace_s: float) -> None:
        super().__init__(app, host, port, grace_s, what="web")
