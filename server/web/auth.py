"""Who may look: the gRPC API's bearer tokens (server.grpc.interceptors does the same check there),
presented as `Authorization: Bearer <token>` or, after the login form, as a session cookie.

The cookie never holds the token: it holds an issue time and an HMAC of it keyed with the token, so
it is checked against the configured tokens (a removed token ends its sessions), works on every
replica with the same tokens, and expires after SESSION_TTL_S. It is HttpOnly and SameSite=Strict.

CSRF: a form POST must carry the value of the `evigate_csrf` cookie (set, HttpOnly and
SameSite=Strict, with every page) in its `csrf` field, and an Origin header, when sent, must be
this host. A call authenticated by the Authorization header is not a browser's ambient credential
and needs neither."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Sequence

SESSION_COOKIE = "evigate_session"
CSRF_COOKIE = "evigate_csrf"
SESSION_TTL_S = 12 * 3600


class TokenCheck:
    def __init__(self, tokens: Sequence[str], clock: Callable[[], float] = time.time) -> None:
        self._tokens = [t.encode() for t in tokens]
        self._clock = clock

    @property
    def enabled(self) -> bool:
        return bool(self._tokens)

    def valid_token(self, presented: str) -> bool:
        candidate = presented.strip().encode()
        # Compared with every token, so the time taken does not tell which one nearly matched.
        return bool(candidate) and any([hmac.compare_digest(candidate, known) for known in self._tokens])

    def valid_header(self, header: str | None) -> bool:
        if header is None:
            return False
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and self.valid_token(token)

    def session_value(self, token: str) -> str:
        """The cookie value for a login with this (valid) token."""
        issued = str(int(self._clock()))
        return f"{issued}.{_sign(token.strip().encode(), issued)}"

    def valid_session(self, value: str | None) -> bool:
        if not value:
            return False
        issued, _, signature = value.partition(".")
        if not issued.isdigit() or not signature:
            return False
        if not 0 <= self._clock() - int(issued) <= SESSION_TTL_S:
            return False
        return any([hmac.compare_digest(_sign(known, issued), signature) for known in self._tokens])


def _sign(key: bytes, issued: str) -> str:
    return hmac.new(key, f"evigate-web-session:{issued}".encode(), hashlib.sha256).hexdigest()


def new_csrf_value() -> str:
    return secrets.token_urlsafe(32)


def csrf_matches(cookie: str | None, field: str | None) -> bool:
    return bool(cookie) and bool(field) and hmac.compare_digest(str(cookie), str(field))


def same_origin(origin: str | None, host: str | None) -> bool:
    """No Origin header (older browsers, some same-origin form posts) passes; a foreign one fails."""
    if origin is None:
        return True
    if origin == "null" or host is None:
        return False
    return origin.split("://", 1)[-1] == host


def local_path(target: str | None) -> str:
    """Where to go after logging in: only a path of this site, never another host (`//evil`)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/sessions"
    return target
