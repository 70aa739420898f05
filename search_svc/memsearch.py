"""mem_search: guided or auto search with filter-before-fetch enforced here, and layer 4.

The three steps of the old workflow (index, context, details) collapse into one tool:
- guided, new search: run the hybrid search once, keep the ordered result list in a
  cursor (store_svc), reply with the first index page and a continuation token;
- guided, continuation: the next index page of the same list (never a repeat or a gap);
- guided, continuation + selectedIds: details of ids this search has SHOWN (anything
  else is refused), each with its timeline neighbours and the tool uses behind it;
- auto: index page and the details of its best rows in one call.
Every bound of the MCP schema is checked again here, so a client that skips the
gateway gets the same answers. Record contents are data: each field is rendered inside
a labelled line or a quoted block (search_svc.render), so no title or narrative can
change the reply's shape. docs/mem_search.md has the long form.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mnemo.config import Settings
from mnemo.errors import InvalidArgument
from mnemo.timefmt import now_ms
from mnemo.v1 import common_pb2, search_pb2, store_pb2
from search_svc.cursor import CursorStore, SearchState, rows_to_json
from search_svc.render import EVIDENCE_NOTICE, Renderer, block, display_id, inline, quoted

MODES = ("guided", "auto")
QUERY_MAX_CHARS = 500
QUERY_MAX_BYTES = 1024
PROJECT_MAX_BYTES = 256
LIMIT_DEFAULT, LIMIT_MAX = 10, 20
DETAILS_DEFAULT, DETAILS_MAX = 3, 5
DEPTH_DEFAULT, DEPTH_MAX = 1, 3
CONTINUATION_LENGTH = 27
CONTINUATION_PATTERN = re.compile(r"^ms_[A-Za-z0-9_-]{24}$")
RESULT_LIST_MAX = 100  # results a search keeps for paging (fetched once)
ID_MAX_CHARS = 64
ID_CHARS = re.compile(r"^[A-Za-z0-9:_-]+$")
ID_FORM = re.compile(r"^(?:(?P<obs>[0-9]{1,18})|(?P<kind>[SsPp])(?P<num>[0-9]{1,18}))$")
SESSION_ID_MAX_CHARS = 256
TITLE_MAX_CHARS = 100
CONTEXT_TITLE_CHARS = 60

TOOL_USES_DEFAULT, TOOL_USES_MAX = 5, 20
TOOL_IDS_MAX = 20
TOOL_TEXT_CAP = 4000  # characters of each raw input/response that get_tool_uses shows
TOOL_USES_PER_DETAIL_CALL = 100  # tool-use refs fetched for the details of one reply

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SAME_SEARCH = "omit it to continue, or omit continuation to start a new search"


# -- validation: the MCP schema's bounds, again ------------------------------------------


@dataclass(frozen=True)
class MemSearchParams:
    mode: str
    query: str
    project: str
    limit: int
    max_details: int
    depth_before: int
    depth_after: int
    continuation: str
    selected: tuple[tuple[str, common_pb2.Ref], ...]  # (display id, ref), duplicates removed
    limit_given: bool
    max_details_given: bool


def _bounded(value: int, field: str, low: int, high: int, default: int) -> int:
    if value == 0:
        return default
    if not low <= value <= high:
        raise InvalidArgument(field, f"must be an integer from {low} to {high}, got {value}")
    return value


def _depth(req: search_pb2.MemSearchRequest, name: str, field: str) -> int:
    if not req.HasField(name):
        return DEPTH_DEFAULT
    value = getattr(req, name)
    if not 0 <= value <= DEPTH_MAX:
        raise InvalidArgument(field, f"must be an integer from 0 to {DEPTH_MAX}, got {value}")
    return value


def check_project(project: str, field: str = "project") -> str:
    if len(project.encode("utf-8")) > PROJECT_MAX_BYTES:
        raise InvalidArgument(field, f"at most {PROJECT_MAX_BYTES} UTF-8 bytes")
    return project


def _check_query(query: str) -> str:
    if len(query) > QUERY_MAX_CHARS:
        raise InvalidArgument("query", f"at most {QUERY_MAX_CHARS} characters, got {len(query)}")
    size = len(query.encode("utf-8"))
    if size > QUERY_MAX_BYTES:
        raise InvalidArgument("query", f"at most {QUERY_MAX_BYTES:,} UTF-8 bytes, got {size:,}")
    return query


def _check_continuation(token: str) -> str:
    unchanged = "pass the token from an earlier reply unchanged"
    if token and len(token) != CONTINUATION_LENGTH:
        raise InvalidArgument("continuation", f"must be exactly {CONTINUATION_LENGTH} characters, "
                              f"got {len(token)}; {unchanged}")
    if token and not CONTINUATION_PATTERN.match(token):
        raise InvalidArgument("continuation", f"must match {CONTINUATION_PATTERN.pattern}; {unchanged}")
    return token


def parse_record_id(raw: str, field: str = "selectedIds") -> tuple[str, common_pb2.Ref]:
    """`#12`/`12` -> observation, `S12` -> summary, `P12` -> prompt; anything else refused."""
    text = raw.strip()
    body = text[1:] if text.startswith("#") else text
    if not body or len(body) > ID_MAX_CHARS or not ID_CHARS.match(body):
        raise InvalidArgument(field, f"{inline(raw, 40)!r}: ids accept only letters, digits and ':_-' "
                              "(a leading '#' is allowed)")
    form = ID_FORM.match(body)
    if not form:
        raise InvalidArgument(field, f"{body!r} is not a record id; use an id from the index: "
                              "#12 (observation), S12 (summary) or P12 (prompt)")
    if form.group("obs"):
        ref = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=int(form.group("obs")))
    else:
        kind = common_pb2.DOC_KIND_SUMMARY if form.group("kind") in "Ss" else common_pb2.DOC_KIND_PROMPT
        ref = common_pb2.Ref(kind=kind, id=int(form.group("num")))
    if ref.id < 1:
        raise InvalidArgument(field, f"{body!r} is not a record id; ids start at 1")
    return display_id(ref), ref


def _check_selection_size(count: int, max_details: int) -> None:
    if count > max_details:
        raise InvalidArgument("selectedIds", f"at most {max_details} ids per call (maxDetails), got {count}; "
                              "pick the most relevant ones, then call again for more")


def _selected(raw_ids: Iterable[str], max_details: int) -> tuple[tuple[str, common_pb2.Ref], ...]:
    picked: dict[str, common_pb2.Ref] = {}
    for raw in raw_ids:
        shown_id, ref = parse_record_id(raw)
        picked.setdefault(shown_id, ref)
    _check_selection_size(len(picked), max_details)
    return tuple(picked.items())


def validate_mem_search(req: search_pb2.MemSearchRequest) -> MemSearchParams:
    """Every bound of the mem_search schema; the first violation -> InvalidArgument."""
    if req.mode and req.mode not in MODES:
        raise InvalidArgument("mode", f"must be one of {', '.join(MODES)}, got {inline(req.mode, 20)!r}")
    query = _check_query(req.query)
    project = check_project(req.project)
    limit = _bounded(req.limit, "limit", 1, LIMIT_MAX, LIMIT_DEFAULT)
    max_details = _bounded(req.max_details, "maxDetails", 1, DETAILS_MAX, DETAILS_DEFAULT)
    before = _depth(req, "depth_before", "depthBefore")
    after = _depth(req, "depth_after", "depthAfter")
    continuation = _check_continuation(req.continuation)
    if not continuation and not query.strip():
        raise InvalidArgument("query", "required for a new search (or pass continuation from an "
                              "earlier reply)")
    # Without maxDetails here, the search's own maxDetails applies (checked once the cursor is loaded).
    selected = _selected(req.selected_ids, max_details if req.max_details else DETAILS_MAX)
    if selected and not continuation:
        raise InvalidArgument("continuation", "required with selectedIds: pick ids from the index of an "
                              "earlier reply and pass its continuation")
    return MemSearchParams(mode=req.mode or "guided", query=query, project=project, limit=limit,
                           max_details=max_details, depth_before=before, depth_after=after,
                           continuation=continuation, selected=selected, limit_given=req.limit != 0,
                           max_details_given=req.max_details != 0)


# -- the engine ---------------------------------------------------------------------------


class MemSearchEngine:
    """mem_search and get_tool_uses over store_svc and the retrieval core. Holds no search
    state itself: cursors live in the store, so any replica continues any search."""

    def __init__(self, backend, retrieval, settings: Settings, clock: Callable[[], int] = now_ms):
        self.store = backend.store
        self.retrieval = retrieval
        self.renderer = Renderer(settings.display_tz)
        self.cursors = CursorStore(backend.store, settings.cursor_ttl_s, clock)

    def capabilities(self) -> list[str]:
        return ["mem_search", "tool_uses"]

    # mem_search ------------------------------------------------------------------------
    def mem_search(self, req: search_pb2.MemSearchRequest) -> search_pb2.MemSearchReply:
        params = validate_mem_search(req)
        if not params.continuation:
            return self._new_search(params)
        state = self.cursors.load(params.continuation)
        _check_same_search(params, state)
        if params.selected:
            return self._selected_details(params, state)
        return self._next_page(params, state)

    def _new_search(self, params: MemSearchParams) -> search_pb2.MemSearchReply:
        found = self.retrieval.hybrid(params.query, common_pb2.Filters(project=params.project),
                                      limit=RESULT_LIST_MAX, offset=0)
        rows = list(found.rows)[:RESULT_LIST_MAX]
        if not rows:
            text = (f"No results for {quoted(params.query)}. Try other or fewer words, or another project; "
                    "this search has no continuation.")
            return search_pb2.MemSearchReply(text=_with_notice(text, found.notice), strategy=found.strategy)
        state = SearchState(query=params.query, project=params.project, mode=params.mode, limit=params.limit,
                            max_details=params.max_details, strategy=found.strategy, notice=found.notice,
                            matches=max(int(found.counts.total), len(rows)), rows=rows_to_json(rows))
        token = self.cursors.create(state)
        return self._page_reply(params, state, token)

    def _next_page(self, params: MemSearchParams, state: SearchState) -> search_pb2.MemSearchReply:
        """The next page; limit and maxDetails given here replace the search's own."""
        if params.limit_given:
            state.limit = params.limit
        if params.max_details_given:
            state.max_details = params.max_details
        return self._page_reply(params, state, params.continuation)

    def _page_reply(self, params: MemSearchParams, state: SearchState,
                    token: str) -> search_pb2.MemSearchReply:
        """Show the page at state.offset, advance, persist; in auto mode (a per-call choice) add
        the details of the page's best rows."""
        start = state.offset
        page = state.index_rows(start, start + state.limit)
        state.offset = start + len(page)
        state.mark_shown([display_id(row.ref) for row in page])
        self.cursors.update(token, state)
        details = self._details(page[: state.max_details], params, state) if params.mode == "auto" else []
        reply = search_pb2.MemSearchReply(rows=page, total=len(state.rows), continuation=token,
                                          details=details, offset=start, strategy=state.strategy,
                                          has_more=state.offset < len(state.rows))
        reply.text = self._render_page(state, reply, params)
        return reply

    def _selected_details(self, params: MemSearchParams, state: SearchState) -> search_pb2.MemSearchReply:
        if not params.max_details_given:  # the search's own maxDetails holds until a call changes it
            _check_selection_size(len(params.selected), state.max_details)
        shown = set(state.shown)
        unseen = [shown_id for shown_id, _ in params.selected if shown_id not in shown]
        if unseen:
            raise InvalidArgument("selectedIds", f"{', '.join(unseen)} not shown by this search; pick ids "
                                  "from its index (or page on with continuation), or start a new search")
        by_id = {display_id(row.ref): row for row in state.index_rows(0, len(state.rows))}
        rows = [by_id[shown_id] for shown_id, _ in params.selected]
        self.cursors.update(params.continuation, state)  # slides the expiry
        details = self._details(rows, params, state)
        reply = search_pb2.MemSearchReply(total=len(state.rows), continuation=params.continuation,
                                          details=details, offset=state.offset, strategy=state.strategy,
                                          has_more=state.offset < len(state.rows))
        reply.text = self._render_details_reply(state, reply, params)
        return reply

    # details ---------------------------------------------------------------------------
    def _details(self, rows: list[common_pb2.IndexRow], params: MemSearchParams,
                 state: SearchState) -> list[search_pb2.MemDetail]:
        if not rows:
            return []
        records = self.store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=[row.ref for row in rows])).records
        by_id = {display_id(_record_ref(record)): record for record in records}
        uses = self._tool_use_refs([row.ref.id for row in rows if _is_observation(row)])
        details = []
        for row in rows:
            record = by_id.get(display_id(row.ref))
            if record is None:
                continue  # deleted since the search ran; the reply says how many are missing
            details.append(search_pb2.MemDetail(
                record=record, row=row, context=self._context(row, params, state),
                tool_uses=uses.get(row.ref.id, []) if _is_observation(row) else []))
        return details

    def _context(self, row: common_pb2.IndexRow, params: MemSearchParams,
                 state: SearchState) -> list[common_pb2.IndexRow]:
        if params.depth_before == 0 and params.depth_after == 0:
            return []
        project = state.project or row.project
        return list(self.retrieval.context_rows(row.ref, params.depth_before, params.depth_after, project))

    def _tool_use_refs(self, observation_ids: list[int]) -> dict[int, list[search_pb2.ToolUseRef]]:
        if not observation_ids:
            return {}
        found = self.store.stub.GetToolUses(store_pb2.GetToolUsesRequest(observation_ids=observation_ids,
                                                                    limit=TOOL_USES_PER_DETAIL_CALL))
        wanted = set(observation_ids)
        grouped: dict[int, list[search_pb2.ToolUseRef]] = {}
        for use in found.tool_uses:
            ref = search_pb2.ToolUseRef(id=use.id, tool_use_id=use.tool_use_id, tool_name=use.tool_name)
            for observation_id in wanted.intersection(use.observation_ids):
                grouped.setdefault(observation_id, []).append(ref)
        return grouped

    # rendering -------------------------------------------------------------------------
    def _render_page(self, state: SearchState, reply: search_pb2.MemSearchReply,
                     params: MemSearchParams) -> str:
        lines = [EVIDENCE_NOTICE, ""] if reply.details else []
        lines.append(_found_line(state, reply))
        if state.notice:
            lines.append(f"Note: {inline(state.notice, 300)}")
        if reply.rows:
            lines += ["", *index_table(reply.rows, self.renderer), ""]
        else:
            lines += ["", "No more results in this search.", ""]
        lines += self._render_details(reply.details, params)
        lines.append(_next_steps(state, reply))
        return "\n".join(lines)

    def _render_details_reply(self, state: SearchState, reply: search_pb2.MemSearchReply,
                              params: MemSearchParams) -> str:
        lines = [EVIDENCE_NOTICE, ""]
        missing = len(params.selected) - len(reply.details)
        if missing:
            lines += [f"{missing} selected record(s) no longer exist in the store.", ""]
        lines += self._render_details(reply.details, params)
        more = " or the next page (continuation only)" if reply.has_more else ""
        lines.append(f"More: other shown ids (at most {state.max_details}){more} "
                     f'with continuation="{reply.continuation}".')
        return "\n".join(lines)

    def _render_details(self, details: Iterable[search_pb2.MemDetail], params: MemSearchParams) -> list[str]:
        lines: list[str] = []
        any_tool_uses = False
        for detail in details:
            lines += render_record(detail.record, self.renderer)
            if params.depth_before or params.depth_after:
                lines.append("Context:")
                lines += [context_line(row, self.renderer) for row in detail.context] or ["- (no neighbours)"]
            if detail.tool_uses:
                any_tool_uses = True
                names = ", ".join(f"{use.id} {inline(use.tool_name, 40)}" for use in detail.tool_uses)
                lines.append(f"Tool uses (layer 4): {names}")
            lines.append("")
        if any_tool_uses:
            lines += ["Call get_tool_uses with those ids only if these details cannot answer.", ""]
        return lines

    # layer 4 ---------------------------------------------------------------------------
    def get_tool_uses(self, req: search_pb2.GetToolUsesToolRequest) -> search_pb2.GetToolUsesReply:
        query = validate_tool_uses(req)
        found = list(self.store.stub.GetToolUses(query).tool_uses)[: query.limit]
        lines = [EVIDENCE_NOTICE, ""]
        if not found:
            lines.append("No recorded tool uses match; check the ids (named in mem_search details) "
                         "or the filters.")
        for use in found:
            lines += render_tool_use(use, self.renderer)
        return search_pb2.GetToolUsesReply(text="\n".join(lines).rstrip() + "\n",
                                           tool_uses=[cap_tool_use(use) for use in found])


def _check_same_search(params: MemSearchParams, state: SearchState) -> None:
    """A continuation continues its own search; a different query or project is a new search."""
    if params.query.strip() and params.query.strip() != state.query.strip():
        raise InvalidArgument("query", f"differs from this continuation's search; {_SAME_SEARCH}")
    if params.project and params.project != state.project:
        raise InvalidArgument("project", f"differs from this continuation's search; {_SAME_SEARCH}")


# -- renderings ---------------------------------------------------------------------------


def day(epoch_ms: int, renderer: Renderer) -> str:
    """The date of a record in the display time zone (`2026-01-15`): the index needs no more."""
    return renderer.time(epoch_ms)[:10]


def index_table(rows: Iterable[common_pb2.IndexRow], renderer: Renderer) -> list[str]:
    """The compact index of mem_search: a few dozen tokens per row."""
    lines = ["| ID | Date | Type | Title | ~Tokens |", "|---|---|---|---|---|"]
    for row in rows:
        tokens = f"~{row.token_estimate}" if row.token_estimate else "-"
        title = inline(row.title, TITLE_MAX_CHARS) or "(untitled)"
        lines.append(f"| {display_id(row.ref)} | {day(row.created_at_epoch, renderer)} | "
                     f"{inline(row.type, 20) or '-'} | {title} | {tokens} |")
    return lines


def context_line(row: common_pb2.IndexRow, renderer: Renderer) -> str:
    """One timeline neighbour of a detail, as compact as an index row."""
    return (f"- {display_id(row.ref)} {day(row.created_at_epoch, renderer)} {inline(row.type, 20) or '-'}: "
            f"{inline(row.title, CONTEXT_TITLE_CHARS) or '(untitled)'}")


def _is_observation(row: common_pb2.IndexRow) -> bool:
    return row.ref.kind == common_pb2.DOC_KIND_OBSERVATION


def _record_ref(record: common_pb2.Record) -> common_pb2.Ref:
    which = record.WhichOneof("record")
    kind = {"observation": common_pb2.DOC_KIND_OBSERVATION, "summary": common_pb2.DOC_KIND_SUMMARY,
            "prompt": common_pb2.DOC_KIND_PROMPT}.get(which, common_pb2.DOC_KIND_UNSPECIFIED)
    return common_pb2.Ref(kind=kind, id=getattr(record, which).id if which else 0)


def _with_notice(text: str, notice: str) -> str:
    return f"{text}\nNote: {inline(notice, 300)}" if notice else text


def _found_line(state: SearchState, reply: search_pb2.MemSearchReply) -> str:
    shown = f"Results {reply.offset + 1}-{reply.offset + len(reply.rows)}" if reply.rows else "No rows"
    kept = len(state.rows)
    beyond = f"; {state.matches} matches, best {kept} kept" if state.matches > kept else ""
    return f"{shown} of {kept} for {quoted(state.query)} (best first{beyond}) [{state.strategy or 'search'}]."


def _next_steps(state: SearchState, reply: search_pb2.MemSearchReply) -> str:
    more = "; continuation alone for the next page" if reply.has_more else ""
    if reply.details:
        picked = f"other ids of this index (at most {state.max_details})"
    else:
        picked = f"at most {state.max_details} ids of this index"
    return f'Details: mem_search with continuation="{reply.continuation}" and selectedIds = {picked}{more}.'


def _block(label: str, value: str) -> list[str]:
    return [f"{label}:", *block(value)] if value and value.strip() else []


def _files_line(obs: common_pb2.Observation) -> list[str]:
    modified = [inline(path, 200) for path in obs.files_modified]
    read = [inline(path, 200) for path in obs.files_read if path not in obs.files_modified]
    labelled = (("modified", modified), ("read", read))
    parts = [f"{label} {', '.join(paths)}" for label, paths in labelled if paths]
    return [f"Files: {'; '.join(parts)}"] if parts else []


def render_observation(obs: common_pb2.Observation, renderer: Renderer) -> list[str]:
    """A full observation, compact: every field once, contents inside labelled lines or quotes."""
    ref = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=obs.id)
    title = inline(obs.title, 300) or "(untitled)"
    lines = [f"## {display_id(ref)} · {inline(obs.type, 24) or 'observation'} · {title}",
             f"{renderer.time(obs.created_at_epoch)} · project {inline(obs.project, 256) or '-'}"]
    if obs.subtitle.strip():
        lines.append(f"Subtitle: {inline(obs.subtitle, 500)}")
    lines += _files_line(obs)
    if obs.concepts:
        lines.append(f"Concepts: {', '.join(inline(concept, 100) for concept in obs.concepts)}")
    lines += _block("Narrative", obs.narrative if obs.narrative.strip() else obs.text)
    if obs.facts:
        lines += ["Facts:", *(f"- {inline(fact, 1000)}" for fact in obs.facts)]
    return lines


def render_record(record: common_pb2.Record, renderer: Renderer) -> list[str]:
    """A full record: a heading made by mnemo, then labelled fields; contents stay inside them."""
    which = record.WhichOneof("record")
    if which == "observation":
        return render_observation(record.observation, renderer)
    item = getattr(record, which)
    kind = "session summary" if which == "summary" else "user prompt"
    lines = [f"## {display_id(_record_ref(record))} · {kind}",
             f"{renderer.time(item.created_at_epoch)} · project {inline(item.project, 256) or '-'}"]
    if which == "summary":
        return lines + (_block("Request", item.request) + _block("Investigated", item.investigated)
                        + _block("Learned", item.learned) + _block("Completed", item.completed)
                        + _block("Next steps", item.next_steps) + _block("Notes", item.notes))
    return lines + [f"Session: {inline(item.content_session_id, 256)}", *_block("Prompt", item.prompt_text)]


# -- layer 4 ------------------------------------------------------------------------------


def validate_tool_uses(req: search_pb2.GetToolUsesToolRequest) -> store_pb2.GetToolUsesRequest:
    """Bounds of get_tool_uses; returns the store query (its limit is the caller's limit)."""
    if len(req.ids) > TOOL_IDS_MAX:
        raise InvalidArgument("ids", f"at most {TOOL_IDS_MAX} ids per call, got {len(req.ids)}")
    if len(req.observation_ids) > TOOL_IDS_MAX:
        raise InvalidArgument("observationIds",
                              f"at most {TOOL_IDS_MAX} ids per call, got {len(req.observation_ids)}")
    row_ids, host_ids = [], []
    for raw in req.ids:
        text = raw.strip()
        if not text or len(text) > SESSION_ID_MAX_CHARS or not ID_CHARS.match(text):
            raise InvalidArgument("ids", f"{inline(raw, 40)!r}: ids accept only letters, digits and ':_-' "
                                  "(numeric tool-use ids or host tool_use_id strings)")
        if text.isdigit():
            row_ids.append(int(text))
        else:
            host_ids.append(text)
    if any(value < 1 for value in req.observation_ids):
        raise InvalidArgument("observationIds", "observation ids start at 1")
    limit = _bounded(req.limit, "limit", 1, TOOL_USES_MAX, TOOL_USES_DEFAULT)
    project = check_project(req.project)
    session = req.content_session_id
    if len(session) > SESSION_ID_MAX_CHARS or _CONTROL.search(session):
        raise InvalidArgument("contentSessionId",
                              f"at most {SESSION_ID_MAX_CHARS} characters, no control characters")
    if not (row_ids or host_ids or req.observation_ids or session):
        raise InvalidArgument("ids", "give ids, observationIds or contentSessionId (tool-use ids are named "
                              "in mem_search details)")
    return store_pb2.GetToolUsesRequest(ids=row_ids, tool_use_ids=host_ids, project=project,
                                        observation_ids=req.observation_ids, content_session_id=session,
                                        limit=limit)


def cap_text(text: str, cap: int = TOOL_TEXT_CAP) -> str:
    """Text cut at `cap` characters, the cut marked with how much was left out."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}… [cut: {len(text) - cap:,} more chars]"


def cap_tool_use(use: common_pb2.ToolUse) -> common_pb2.ToolUse:
    capped = common_pb2.ToolUse()
    capped.CopyFrom(use)
    capped.tool_input = cap_text(use.tool_input)
    capped.tool_response = cap_text(use.tool_response)
    capped.input_truncated = use.input_truncated or len(use.tool_input) > TOOL_TEXT_CAP
    capped.response_truncated = use.response_truncated or len(use.tool_response) > TOOL_TEXT_CAP
    return capped


def _raw_text(label: str, text: str, cut_at_capture: bool, original_size: int) -> list[str]:
    note = f", cut at capture from {original_size:,} bytes" if cut_at_capture else ""
    return ["", f"{label} ({len(text):,} chars{note}; shown up to {TOOL_TEXT_CAP:,}):",
            *block(cap_text(text) or "(empty)")]


def render_tool_use(use: common_pb2.ToolUse, renderer: Renderer) -> list[str]:
    observations = ", ".join(f"#{value}" for value in use.observation_ids) or "-"
    when = renderer.time(use.created_at_epoch, seconds=True)
    lines = [f"## Tool use {use.id} · {inline(use.tool_name, 60) or '-'}",
             f"{when} · project {inline(use.project, 256) or '-'} · "
             f"session {inline(use.content_session_id, 256) or '-'}",
             f"Host tool_use_id: {inline(use.tool_use_id, 256) or '-'} · observations: {observations}"]
    lines += _raw_text("Input", use.tool_input, use.input_truncated, use.input_size)
    lines += _raw_text("Response", use.tool_response, use.response_truncated, use.response_size)
    return lines + [""]
