"""mem_search: guided or auto search with filter-before-fetch enforced here, and layer 4.

The three steps of the old workflow (index, context, details) collapse into one tool:
- guided, new search: run the hybrid search once, keep the ordered result list in a
  cursor (store_svc), reply with the first index page and a continuation token;
- guided, continuation: the next index page of the same list (never a repeat or a gap);
- guided, continuation + selectedIds: details of ids this search has SHOWN (anything
  else is refused), each with its timeline neighbours and the tool uses behind it;
- auto: index page and the details of its best rows in one call.
docs/mem_search.md has the long form.
"""

from __future__ import annotations

from collections.abc import Callable

from mnemo.config import Settings
from mnemo.errors import InvalidArgument
from mnemo.privacy import clean
from mnemo.timefmt import now_ms
from mnemo.v1 import common_pb2, search_pb2, store_pb2
from mnemo.vocab import TOOL_USE_TEXT_CAP
from search_svc.backend import Backend
from search_svc.cursor import CursorStore, SearchState, rows_to_json
from search_svc.details import Details
from search_svc.memsearch.params import (
    MemSearchParams,
    check_selection_size,
    validate_mem_search,
    validate_tool_uses,
)
from search_svc.memsearch.replies import details_text, no_results, page_text, tool_uses_text
from search_svc.render import Renderer, cap_text, display_id, record_ref
from search_svc.retrieval import Retrieval

RESULT_LIST_MAX = 100  # results a search keeps for paging (fetched once)
TOOL_USES_PER_DETAIL_CALL = 100  # tool-use refs fetched for the details of one reply
_SAME_SEARCH = "omit it to continue, or omit continuation to start a new search"


class MemSearchEngine:
    """mem_search and get_tool_uses over store_svc and the retrieval core. Holds no search
    state itself: cursors live in the store, so any replica continues any search."""

    def __init__(self, backend: Backend, retrieval: Retrieval, settings: Settings,
                 clock: Callable[[], int] = now_ms):
        self.store = backend.store
        self.retrieval = retrieval
        self.details = Details(retrieval)
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
            return search_pb2.MemSearchReply(text=no_results(params.query, found.notice),
                                             strategy=found.strategy)
        state = SearchState(query=params.query, project=params.project, mode=params.mode, limit=params.limit,
                            max_details=params.max_details, strategy=found.strategy, notice=found.notice,
                            matches=max(int(found.counts.total), len(rows)), rows=rows_to_json(rows))
        return self._page_reply(params, state, None)

    def _next_page(self, params: MemSearchParams, state: SearchState) -> search_pb2.MemSearchReply:
        """The next page; limit and maxDetails given here replace the search's own."""
        if params.limit_given:
            state.limit = params.limit
        if params.max_details_given:
            state.max_details = params.max_details
        return self._page_reply(params, state, params.continuation)

    def _page_reply(self, params: MemSearchParams, state: SearchState,
                    token: str | None) -> search_pb2.MemSearchReply:
        """Show the page at state.offset, advance, persist (a new search's cursor is created
        here, with its first page in it: one store write); in auto mode (a per-call choice) add
        the details of the page's best rows."""
        start = state.offset
        page = state.index_rows(start, start + state.limit)
        state.offset = start + len(page)
        state.mark_shown([row.display_id for row in page])
        token = self.cursors.save(state, token)
        details = self._details(page[: state.max_details], params, state) if params.mode == "auto" else []
        reply = search_pb2.MemSearchReply(rows=page, total=len(state.rows), continuation=token,
                                          details=details, offset=start, strategy=state.strategy,
                                          has_more=state.offset < len(state.rows))
        reply.text = page_text(self.renderer, state, reply, params)
        return reply

    def _selected_details(self, params: MemSearchParams, state: SearchState) -> search_pb2.MemSearchReply:
        if params.max_details_given:  # replaces the search's own from now on, as on a page (docs/mem_search.md)
            state.max_details = params.max_details
        else:  # the search's own maxDetails holds until a call changes it
            check_selection_size(len(params.selected), state.max_details)
        if params.limit_given:
            state.limit = params.limit
        shown = set(state.shown)
        unseen = [shown_id for shown_id, _ in params.selected if shown_id not in shown]
        if unseen:
            raise InvalidArgument("selectedIds", f"{', '.join(unseen)} not shown by this search; pick ids "
                                  "from its index (or page on with continuation), or start a new search")
        by_id = {row.display_id: row for row in state.index_rows(0, len(state.rows))}
        rows = [by_id[shown_id] for shown_id, _ in params.selected]
        self.cursors.save(state, params.continuation)  # slides the expiry
        details = self._details(rows, params, state)
        reply = search_pb2.MemSearchReply(total=len(state.rows), continuation=params.continuation,
                                          details=details, offset=state.offset, strategy=state.strategy,
                                          has_more=state.offset < len(state.rows))
        reply.text = details_text(self.renderer, state, reply, params)
        return reply

    # details ---------------------------------------------------------------------------
    def _details(self, rows: list[common_pb2.IndexRow], params: MemSearchParams,
                 state: SearchState) -> list[search_pb2.MemDetail]:
        if not rows:
            return []
        records = self.store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=[row.ref for row in rows])).records
        by_id = {display_id(record_ref(record)): record for record in records}
        uses = self._tool_use_refs([row.ref.id for row in rows if _is_observation(row)])
        details = []
        for row in rows:
            record = by_id.get(row.display_id)
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
        return self.details.context_rows(row.ref, params.depth_before, params.depth_after, project)

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

    # layer 4 ---------------------------------------------------------------------------
    def get_tool_uses(self, req: search_pb2.GetToolUsesToolRequest) -> search_pb2.GetToolUsesReply:
        query = validate_tool_uses(req)
        found = list(self.store.stub.GetToolUses(query).tool_uses)[: query.limit]
        return search_pb2.GetToolUsesReply(text=tool_uses_text(self.renderer, found),
                                           tool_uses=[cap_tool_use(use) for use in found])


def _check_same_search(params: MemSearchParams, state: SearchState) -> None:
    """A continuation continues its own search; a different query or project is a new search."""
    # The state keeps the privacy-filtered query and project (search_svc/cursor.py).
    if params.query.strip() and clean(params.query) != state.query.strip():
        raise InvalidArgument("query", f"differs from this continuation's search; {_SAME_SEARCH}")
    if params.project and clean(params.project) != state.project:
        raise InvalidArgument("project", f"differs from this continuation's search; {_SAME_SEARCH}")


def _is_observation(row: common_pb2.IndexRow) -> bool:
    return row.ref.kind == common_pb2.DOC_KIND_OBSERVATION


def cap_tool_use(use: common_pb2.ToolUse) -> common_pb2.ToolUse:
    """A tool use whose raw input and response are cut at TOOL_USE_TEXT_CAP, the cut flagged."""
    capped = common_pb2.ToolUse()
    capped.CopyFrom(use)
    capped.tool_input = cap_text(use.tool_input)
    capped.tool_response = cap_text(use.tool_response)
    capped.input_truncated = use.input_truncated or len(use.tool_input) > TOOL_USE_TEXT_CAP
    capped.response_truncated = use.response_truncated or len(use.tool_response) > TOOL_USE_TEXT_CAP
    return capped
