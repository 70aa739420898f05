"""Who may read the viewer: whoever opened the URL `mnemo ui` printed, and nobody else.

The URL carries a one-time token. Its first use trades it for a session cookie (HttpOnly,
SameSite=Strict) and redirects to the same page without the token, so the token never
stays in the address bar or the history; a second use of the token is refused. A new
browser gets in with a fresh link: `mnemo ui` run again asks the running viewer for one
(POST /api/link with the link secret, which only the viewer's owner can read, in
$MNEMO_HOME/run/viewer.json, mode 0600 in a 0700 directory). Other
local users can reach the loopback port but hold neither. The Host header must name the
loopback address we bound (a page elsewhere cannot rebind a name of its own onto our
port), and state-changing requests must come from our own origin.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE = "mnemo_viewer"
TOKEN_PARAM = "token"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
LINK_PATH = "/api/link"
LINK_HEADER = "x-mnemo-link-secret"


class Gate:
    """The one-time tokens (the first one printed at start, more issued on request) and
    the sessions they opened."""

    def __init__(self) -> None:
        self.token = secrets.token_urlsafe(32)
        self.link_secret = secrets.token_urlsafe(32)
        self._pending = {self.token}
        self._sessions: set[str] = set()
        self._lock = threading.Lock()

    def issue(self) -> str:
        """Another one-time token, for a new link to the running viewer."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._pending.add(token)
        return token

    def redeem(self, offered: str) -> str | None:
        """A new session id for a pending token, once; None otherwise."""
        with self._lock:
            match = next((t for t in self._pending if hmac.compare_digest(offered.encode(), t.encode())), None)
            if match is None:
                return None
            self._pending.discard(match)  # one time only
            if match == self.token:
                self.token = ""
            session = secrets.token_urlsafe(32)
            self._sessions.add(session)
            return session

    def links_allowed(self, offered: str) -> bool:
        return bool(offered) and hmac.compare_digest(offered.encode(), self.link_secret.encode())

    def admits(self, session: str) -> bool:
        with self._lock:
            return any(hmac.compare_digest(session.encode(), known.encode()) for known in self._sessions)


def _host_ok(request: Request, port: int) -> bool:
    host = request.headers.get("host", "")
    return host in {f"{name}:{port}" for name in LOOPBACK_HOSTS}


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None:  # browsers send Origin on every POST; tools (curl) may not
        return True
    return origin == f"{request.url.scheme}://{request.headers.get('host', '')}"


class GateMiddleware:
    """Refuse every request without a session, except the one that redeems the token."""

    def __init__(self, app: ASGIApp, gate: Gate, port_of: object):
        self.app, self.gate, self.port_of = app, gate, port_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        response = self._check(request)
        if response is None:
            await self.app(scope, receive, send)
        else:
            await response(scope, receive, send)

    def _check(self, request: Request) -> Response | None:
        port = self.port_of() if callable(self.port_of) else 0
        if not _host_ok(request, port):
            return PlainTextResponse("Forbidden: unexpected Host header.", status_code=403)
        if request.method not in ("GET", "HEAD") and not _same_origin(request):
            return PlainTextResponse("Forbidden: cross-origin request.", status_code=403)
        if request.url.path == LINK_PATH and request.method == "POST":
            allowed = self.gate.links_allowed(request.headers.get(LINK_HEADER, ""))
            return None if allowed else PlainTextResponse("Forbidden: wrong link secret.", status_code=403)
        offered = request.query_params.get(TOKEN_PARAM)
        if offered is not None:
            return self._redeem(request, offered)
        if self.gate.admits(request.cookies.get(COOKIE, "")):
            return None
        return PlainTextResponse(
            "Forbidden: open the URL that `mnemo ui` printed (its token works once, in one browser).",
            status_code=403)

    def _redeem(self, request: Request, offered: str) -> Response:
        session = self.gate.redeem(offered)
        if session is None:
            return PlainTextResponse("Forbidden: this token was already used or is wrong; run `mnemo ui` again.",
                                     status_code=403)
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
        target = URL(path=request.url.path, query=urlencode(rest))
        response = RedirectResponse(str(target), status_code=303)
        response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path="/")
        return response
