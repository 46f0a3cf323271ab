"""The viewer over plain HTTP (httpx): status codes, security headers, cookies, CSRF, auth, and
the settings that turn it on; sessions come from the real pipeline (tests/web/world.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evigate.server.settings import ConfigError, load_settings, web_address
from evigate.server.usecases.trace import TraceUseCase
from evigate.server.web import listing
from evigate.server.web.auth import CSRF_COOKIE, SESSION_COOKIE
from tests.server.conftest import HIGH_CPU_ZH
from tests.support.server_proc import ServerProc
from tests.support.waiting import until
from tests.web.conftest import TOKEN
from tests.web.world import ViewerWorld

BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def session_id(world: ViewerWorld) -> str:
    world.ask(HIGH_CPU_ZH, "http-ref")
    return "http-ref"


@pytest.fixture
def client(world: ViewerWorld) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.url, follow_redirects=False, timeout=30) as c:
        yield c


def _login(client: httpx.Client) -> None:
    form = client.get("/login")
    csrf = client.cookies[CSRF_COOKIE]
    assert form.status_code == 200
    response = client.post("/login", data={"token": TOKEN, "csrf": csrf, "next": "/sessions"})
    assert response.status_code == 303 and response.headers["location"] == "/sessions"


def _csrf_of(page: httpx.Response) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert match is not None
    return match.group(1)


def test_pages_carry_a_strict_content_security_policy(client: httpx.Client, session_id: str) -> None:
    for path in ("/sessions", f"/sessions/{session_id}", "/cases", "/sessions/missing", "/static/viewer.css"):
        response = client.get(path, headers=BEARER)
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, path
        assert "unsafe-inline" not in csp and "script-src 'self'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
    page = client.get(f"/sessions/{session_id}", headers=BEARER)
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    assert "<script>" not in page.text and " on" + "load=" not in page.text  # no inline script at all
    assert re.findall(r"<script[^>]*>", page.text) == ['<script src="/static/viewer.js" defer>']


def test_without_credentials_a_browser_is_sent_to_login_and_a_wrong_token_gets_401(
    client: httpx.Client, session_id: str
) -> None:
    page = client.get(f"/sessions/{session_id}?x=1")
    assert page.status_code == 303
    assert page.headers["location"] == f"/login?next=%2Fsessions%2F{session_id}%3Fx%3D1"
    wrong = client.get("/sessions", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
    assert client.get("/cases", headers=BEARER).status_code == 200
    assert client.get(f"/sessions/{session_id}/calls/1/result").status_code == 303


def test_login_sets_an_httponly_strict_cookie_and_refuses_a_wrong_token(client: httpx.Client) -> None:
    form = client.get("/login?next=//evil.example/x")
    assert 'name="next" value="/sessions"' in form.text  # never a redirect to another host
    csrf = client.cookies[CSRF_COOKIE]
    assert "httponly" in form.headers["set-cookie"].lower()
    refused = client.post("/login", data={"token": "wrong", "csrf": csrf})
    assert refused.status_code == 401 and "not valid" in refused.text
    assert SESSION_COOKIE not in client.cookies
    accepted = client.post("/login", data={"token": TOKEN, "csrf": csrf, "next": "/cases"})
    assert accepted.status_code == 303 and accepted.headers["location"] == "/cases"
    cookie = accepted.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and TOKEN not in cookie
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    assert client.get("/cases").status_code == 200
    csrf_page = client.get("/sessions")
    logout = client.post("/logout", data={"csrf": _csrf_of(csrf_page)})
    assert logout.status_code == 303
    assert client.get("/cases").status_code == 303


def test_login_needs_the_csrf_token(client: httpx.Client) -> None:
    client.get("/login")
    assert client.post("/login", data={"token": TOKEN}).status_code == 403


def test_feedback_without_or_with_a_wrong_csrf_token_is_refused(
    client: httpx.Client, world: ViewerWorld, session_id: str
) -> None:
    _login(client)
    page = client.get(f"/sessions/{session_id}")
    csrf = _csrf_of(page)
    url = f"/sessions/{session_id}/feedback"
    assert client.post(url, data={"feedback": "useful"}).status_code == 403
    assert client.post(url, data={"feedback": "useful", "csrf": "forged"}).status_code == 403
    foreign = client.post(
        url, data={"feedback": "useful", "csrf": csrf}, headers={"Origin": "http://evil.example"}
    )
    assert foreign.status_code == 403
    assert world.trace(session_id).session.feedback is None  # nothing was recorded
    assert client.post(url, data={"feedback": "maybe", "csrf": csrf}).status_code == 400


def test_feedback_is_idempotent_and_makes_one_case(
    client: httpx.Client, world: ViewerWorld, session_id: str
) -> None:
    _login(client)
    csrf = _csrf_of(client.get(f"/sessions/{session_id}"))
    for _ in range(2):
        response = client.post(f"/sessions/{session_id}/feedback", data={"feedback": "useful", "csrf": csrf})
        assert response.status_code == 303
        assert response.headers["location"] == f"/sessions/{session_id}?feedback=recorded#feedback"
    trace = world.trace(session_id)
    assert trace.session.feedback == "useful" and trace.case_id
    cases = client.get("/cases").text
    assert cases.count(f'href="/sessions/{session_id}"') == 1 and trace.case_id in cases
    page = client.get(f"/sessions/{session_id}?feedback=recorded").text
    assert "Feedback recorded." in page and trace.case_id in page
    # A header-authenticated client needs no CSRF token: it is no browser's ambient credential.
    with httpx.Client(base_url=str(client.base_url), headers=BEARER) as api:
        header_call = api.post(f"/sessions/{session_id}/feedback", data={"feedback": "useful"})
    assert header_call.status_code == 303


def test_unknown_session_call_and_path_are_404(client: httpx.Client, session_id: str) -> None:
    assert client.get("/sessions/no-such-session", headers=BEARER).status_code == 404
    assert client.get(f"/sessions/{session_id}/calls/999999/result", headers=BEARER).status_code == 404
    assert client.get("/nowhere", headers=BEARER).status_code == 404
    assert client.get("/sessions?page=garbage", headers=BEARER).status_code == 400


def test_a_call_result_is_served_whole_as_json(
    client: httpx.Client, world: ViewerWorld, session_id: str
) -> None:
    call = world.trace(session_id).invocations[0]
    response = client.get(f"/sessions/{session_id}/calls/{call.id}/result", headers=BEARER)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    assert response.json() == call.raw_result


def test_the_viewer_is_off_unless_set_and_binds_to_loopback() -> None:
    assert load_settings({}, {}).web.address == ""
    assert load_settings({}, {"EVIGATE_WEB": "127.0.0.1:8080"}).web.address == "127.0.0.1:8080"
    assert (
        load_settings({"web": "0.0.0.0:9000"}, {"EVIGATE_WEB": "127.0.0.1:8080"}).web.address
        == "0.0.0.0:9000"
    )
    assert web_address("8080") == ("127.0.0.1", 8080)
    assert web_address(":8080") == ("127.0.0.1", 8080)
    assert web_address("[::1]:8080") == ("::1", 8080)
    with pytest.raises(ConfigError, match="web"):
        load_settings({"web": "localhost:http"}, {})


def test_the_served_viewer_listens_on_loopback(world: ViewerWorld) -> None:
    assert world.app.web is not None and world.app.web.host == "127.0.0.1"


def test_evigate_serve_with_web_prints_the_viewer_url_and_serves_it(tmp_path: Path) -> None:
    """The command as users run it: `evigate serve --web`, one process for gRPC and the viewer."""
    server = ServerProc(tmp_path, args=["--web", "127.0.0.1:0"]).start()
    prefix = "evigate web viewer on http://127.0.0.1:"

    def viewer_line() -> str | None:
        return next((line for line in server.log_text().splitlines() if line.startswith(prefix)), None)

    try:
        server.wait_serving()
        until(lambda: viewer_line() is not None, within=30, what="the viewer URL printed")
        url = (viewer_line() or "").split(" on ", 1)[1].strip()
        listing = httpx.get(f"{url}sessions", timeout=30)
        assert listing.status_code == 200 and "<h1>Sessions</h1>" in listing.text
    finally:
        assert server.stop() == 0


def test_a_web_port_in_use_stops_serve_naming_it(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = ServerProc(tmp_path, args=["--web", f"127.0.0.1:{port}"]).start()
        try:
            with pytest.raises(AssertionError, match=rf"cannot listen on 127.0.0.1:{port} \(web\)"):
                server.wait_serving()
            assert server.proc is not None and server.proc.wait(timeout=30) != 0
        finally:
            server.reap()


def test_filtered_pages_cover_the_matching_sessions_once_newest_first(world: ViewerWorld) -> None:
    """Verdict and text are filtered on the store's pages; following the next tokens reads each
    matching session exactly once, in the store's order."""
    questions = [
        ("page-a", HIGH_CPU_ZH),
        ("page-b", "gateway 有 HighCPUUsage 告警吗？"),
        ("page-c", HIGH_CPU_ZH),
    ]
    for session_id, question in questions:
        world.ask(question, session_id)
    assert world.app.database is not None
    traces = TraceUseCase(world.app.database.repo)
    filters = listing.Filters.parse({"q": "HighCPUUsage", "verdict": "PASS"})

    async def every_page() -> list[list[str]]:
        pages, token = [], None
        while True:
            page = await listing.find_sessions(traces, filters, token, page_size=1)
            pages.append([s.session_id for s in page.sessions])
            if page.next_token is None:
                return pages
            token = page.next_token

    async def everything() -> list[str]:
        sessions, _ = await traces.list_sessions(None, None, 1000, None)
        return [s.session_id for s in sessions if filters.keeps(s)]

    pages = world.run(every_page())
    assert [s for page in pages for s in page] == world.run(everything())
    assert {"page-a", "page-b", "page-c"} <= {s for page in pages for s in page}
    assert all(len(page) <= 1 for page in pages)


def test_web_and_other_settings_come_from_a_config_file_below_env_and_flags(tmp_path: Path) -> None:
    config = tmp_path / "evigate.toml"
    config.write_text(
        'web = "127.0.0.1:8081"\nmax_rounds = 3\nauth_tokens = ["a", "b"]\n'
        '[logs]\ndefault_tz = "Asia/Shanghai"\n',  # a section another reader takes
        encoding="utf-8",
    )
    from_file = load_settings({"config_file": str(config)}, {})
    assert (from_file.web.address, from_file.agents.max_rounds, from_file.auth.tokens) == (
        "127.0.0.1:8081",
        3,
        ("a", "b"),
    )
    by_env = load_settings({}, {"EVIGATE_CONFIG_FILE": str(config), "EVIGATE_WEB": "127.0.0.1:9090"})
    assert by_env.web.address == "127.0.0.1:9090" and by_env.agents.max_rounds == 3
    flag = load_settings(
        {"config_file": str(config), "web": "127.0.0.1:9191"}, {"EVIGATE_WEB": "127.0.0.1:9090"}
    )
    assert flag.web.address == "127.0.0.1:9191"
    as_json = tmp_path / "evigate.json"
    as_json.write_text('{"web": 8082}', encoding="utf-8")
    assert web_address(load_settings({"config_file": str(as_json)}, {}).web.address) == ("127.0.0.1", 8082)
    config.write_text('webb = "127.0.0.1:8081"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown setting.*webb"):
        load_settings({"config_file": str(config)}, {})
    config.write_text('max_rounds = "many"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="max_rounds"):
        load_settings({"config_file": str(config)}, {})
