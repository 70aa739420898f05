"""The viewer's web application: server-rendered pages and a small JSON API over the
same calls (Starlette, Jinja2 with autoescape on every template).

Handlers are plain functions (Starlette runs them on its thread pool), because the
search_svc client is blocking. A MnemoError becomes a page (or JSON) naming what is wrong
(the application's exception handler, Viewer._failure).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from mnemo.errors import InvalidArgument, MnemoError
from mnemo.v1 import store_pb2
from mnemo.vocab import OBSERVATION_TYPES
from viewer import live, present, when
from viewer.auth import LINK_PATH, Gate, GateMiddleware
from viewer.client import MemoryClient, SearchQuery

HERE = Path(__file__).parent
_STATUS = {"INVALID_ARGUMENT": 400, "NOT_FOUND": 404, "UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504}
KINDS = ("observations", "sessions", "prompts")


def _templates() -> Jinja2Templates:
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["bytes"] = present.human_bytes
    env.filters["readable"] = present.readable
    return Jinja2Templates(env=env)


def query_from(params: Any) -> SearchQuery:
    """A search from query parameters: q, project, type (repeatable), from, to, file (repeatable), kind."""
    try:
        limit = int(params.get("limit") or 20)
        offset = int(params.get("offset") or 0)
    except ValueError:
        raise InvalidArgument("limit", "must be a whole number") from None
    return SearchQuery(
        text=params.get("q", ""), project=params.get("project", ""),
        types=tuple(t for t in params.getlist("type") if t), date_start=when.resolve(params.get("from", ""), "from"),
        date_end=when.resolve(params.get("to", ""), "to"), files=tuple(f for f in params.getlist("file") if f),
        kinds=tuple(k for k in params.getlist("kind") if k), limit=limit, offset=offset,
    )


class Viewer:
    """Pages and API endpoints over one MemoryClient."""

    def __init__(self, client: MemoryClient, home: Path):
        self.client, self.home = client, home
        self.templates = _templates()

    def _page(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("project", request.query_params.get("project", ""))
        context.setdefault("types", OBSERVATION_TYPES)
        return self.templates.TemplateResponse(request, name, context, status_code=status)

    def _failure(self, request: Request, err: Exception) -> Response:
        """The application's handler of MnemoError (registered for that class only)."""
        code = getattr(err, "code", "INTERNAL")
        status = _STATUS.get(code, 500)
        # The stack being down is said in words, with what to do, not as a gRPC status text.
        message = live.DOWN_TEXT if code == "UNAVAILABLE" else str(err)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": code, "message": message}, status_code=status)
        return self._page(request, "error.html", status=status, code=code, message=message)

    # -- pages -------------------------------------------------------------------------------
    def home_page(self, request: Request) -> Response:
        project = request.query_params.get("project", "")
        health = self.client.health(project)
        overview = present.overview_view(health.overview) if health.overview else None
        bars, chart_width, peak = present.activity_bars(health.overview.activity) if health.overview else ([], 1, 0)
        rows = [present.row_view(r) for r in self.client.recent(project)] if health.overview else []
        return self._page(request, "home.html", health=health, overview=overview, bars=bars,
                          chart_width=chart_width, peak=peak, rows=rows, disk=present.disk_use(self.home),
                          notice=request.query_params.get("notice", ""), down=live.stack_down(health),
                          problem=live.down_text(health))

    def search_page(self, request: Request) -> Response:
        query = query_from(request.query_params)
        reply = self.client.search(query) if (query.text or query.types or query.files or query.date_start
                                              or query.date_end) else None
        rows = [present.row_view(r) for r in reply.rows] if reply else []
        return self._page(request, "search.html", query=query, reply=reply, rows=rows, kinds=KINDS)

    def record_page(self, request: Request) -> Response:
        detail = self.client.detail(request.path_params["record_id"])
        return self._page(
            request, "record.html", detail=detail, row=present.row_view(detail.row),
            sections=present.record_sections(detail.record), meta=present.record_meta(detail.record),
            context_rows=[present.row_view(r) for r in detail.context],
            kind=detail.record.WhichOneof("record"), tool_uses=list(detail.tool_uses),
            wrong=present.wrong_mark(detail.record))

    # -- curation ----------------------------------------------------------------------------
    async def forget(self, request: Request) -> Response:
        form = await request.form()
        ids = [str(v) for v in form.getlist("id") if v]
        sessions = [str(v) for v in form.getlist("session") if v]
        project = str(form.get("project") or "")
        if str(form.get("confirm") or "") != "yes":
            raise InvalidArgument("confirm", "must be 'yes': forgetting cannot be undone")
        reply = self.client.forget(ids, sessions, project)
        return RedirectResponse(f"/?notice={_quote(reply.text)}", status_code=303)

    async def mark_wrong(self, request: Request) -> Response:
        form = await request.form()
        record_id = request.path_params["record_id"]
        self.client.mark_wrong([record_id], undo=str(form.get("undo") or "") == "yes",
                               reason=str(form.get("reason") or ""))
        return RedirectResponse(f"/record/{_quote(record_id)}", status_code=303)

    async def edit(self, request: Request) -> Response:
        form = await request.form()
        record_id = request.path_params["record_id"]
        edit = store_pb2.EditObservationRequest(id=_observation_id(record_id))
        if str(form.get("title") or "").strip():
            edit.title = str(form["title"])
        if str(form.get("type") or ""):
            edit.type = str(form["type"])
        if "concepts" in form:
            edit.replace_concepts = True
            edit.concepts.extend(c.strip() for c in str(form["concepts"]).split(",") if c.strip())
        self.client.edit(edit)
        return RedirectResponse(f"/record/{record_id}", status_code=303)

    # -- JSON API ----------------------------------------------------------------------------
    def api_events(self, request: Request) -> Response:
        """The timeline's live state as Server-Sent Events (viewer/live.py)."""
        return live.stream(request, self.client, self.home)

    def api_recent(self, request: Request) -> Response:
        rows = self.client.recent(request.query_params.get("project", ""), limit=50)
        return JSONResponse({"rows": [present.row_view(r) for r in rows]})

    def api_search(self, request: Request) -> Response:
        reply = self.client.search(query_from(request.query_params))
        return JSONResponse({"rows": [present.row_view(r) for r in reply.rows], "total": reply.counts.total,
                             "strategy": reply.strategy, "notice": reply.notice})

    def api_record(self, request: Request) -> Response:
        return JSONResponse(present.as_dict(self.client.detail(request.path_params["record_id"])))

    def api_overview(self, request: Request) -> Response:
        health = self.client.health(request.query_params.get("project", ""))
        body: dict[str, Any] = {"services": health.services, "problem": health.problem,
                                "disk_bytes": present.disk_use(self.home)}
        if health.overview:
            body["overview"] = present.overview_view(health.overview)
        return JSONResponse(body)


def _quote(text: str) -> str:
    return quote(text[:300])


def _observation_id(record_id: str) -> int:
    raw = record_id.lstrip("#")
    if not raw.isdigit():
        raise InvalidArgument("id", "only observations can be edited (ids like #12)")
    return int(raw)


def build_app(client: MemoryClient, home: Path, gate: Gate, port_of: Callable[[], int]) -> Starlette:
    viewer = Viewer(client, home)

    def fresh_link(request: Request) -> Response:
        """A new one-time token (GateMiddleware let only the link secret's holder in)."""
        return JSONResponse({"token": gate.issue()})

    routes = [
        Route("/", viewer.home_page),
        Route("/search", viewer.search_page),
        Route("/record/{record_id}", viewer.record_page),
        Route("/record/{record_id}/edit", viewer.edit, methods=["POST"]),
        Route("/record/{record_id}/wrong", viewer.mark_wrong, methods=["POST"]),
        Route("/forget", viewer.forget, methods=["POST"]),
        Route("/api/recent", viewer.api_recent),
        Route("/api/events", viewer.api_events),
        Route(LINK_PATH, fresh_link, methods=["POST"]),
        Route("/api/search", viewer.api_search),
        Route("/api/record/{record_id}", viewer.api_record),
        Route("/api/overview", viewer.api_overview),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    # A MnemoError from any handler (sync or async) becomes its page or JSON (Viewer._failure).
    return Starlette(routes=routes, middleware=[Middleware(GateMiddleware, gate=gate, port_of=port_of)],
                     exception_handlers={MnemoError: viewer._failure})
