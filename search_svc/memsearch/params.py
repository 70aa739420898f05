"""The bounds of mem_search and get_tool_uses, checked again here.

The MCP schemas state the same bounds (both read mnemo.vocab), so a client that skips
the gateway gets the same answers. The first violation raises InvalidArgument naming
the field as the tool's schema names it (`maxDetails`, `selectedIds`...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mnemo.errors import InvalidArgument
from mnemo.v1 import common_pb2, search_pb2, store_pb2
from mnemo.vocab import (
    CONTINUATION_LENGTH,
    CONTINUATION_PATTERN,
    CONTINUATION_RE,
    CONTROL_CHARS_RE,
    MEM_SEARCH_DEPTH_DEFAULT,
    MEM_SEARCH_DEPTH_MAX,
    MEM_SEARCH_DETAILS_DEFAULT,
    MEM_SEARCH_DETAILS_MAX,
    MEM_SEARCH_ID_MAX_CHARS,
    MEM_SEARCH_LIMIT_DEFAULT,
    MEM_SEARCH_LIMIT_MAX,
    MEM_SEARCH_MODE_DEFAULT,
    MEM_SEARCH_MODES,
    MEM_SEARCH_QUERY_MAX_BYTES,
    MEM_SEARCH_QUERY_MAX_CHARS,
    SESSION_ID_MAX_CHARS,
    TOOL_USE_ID_MAX_CHARS,
    TOOL_USE_IDS_MAX,
    TOOL_USES_LIMIT_DEFAULT,
    TOOL_USES_LIMIT_MAX,
    parse_display_id,
)
from search_svc.render import display_id, shown
from search_svc.requests import check_project, optional_bounded

ID_CHARS = re.compile(r"[A-Za-z0-9:_-]+")


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
    return optional_bounded(req, name, default=MEM_SEARCH_DEPTH_DEFAULT, maximum=MEM_SEARCH_DEPTH_MAX, field=field)


def _check_query(query: str) -> str:
    if len(query) > MEM_SEARCH_QUERY_MAX_CHARS:
        raise InvalidArgument("query", f"at most {MEM_SEARCH_QUERY_MAX_CHARS} characters, got {len(query)}")
    size = len(query.encode("utf-8"))
    if size > MEM_SEARCH_QUERY_MAX_BYTES:
        raise InvalidArgument("query", f"at most {MEM_SEARCH_QUERY_MAX_BYTES:,} UTF-8 bytes, got {size:,}")
    return query


def _check_continuation(token: str) -> str:
    unchanged = "pass the token from an earlier reply unchanged"
    if token and len(token) != CONTINUATION_LENGTH:
        raise InvalidArgument("continuation", f"must be exactly {CONTINUATION_LENGTH} characters, "
                              f"got {len(token)}; {unchanged}")
    if token and not CONTINUATION_RE.fullmatch(token):
        raise InvalidArgument("continuation", f"must match {CONTINUATION_PATTERN}; {unchanged}")
    return token


def parse_record_id(raw: str, field: str = "selectedIds") -> tuple[str, common_pb2.Ref]:
    """`#12`/`12` -> observation, `S12` -> summary, `P12` -> prompt; anything else refused.
    Only spaces around an id are forgiven: "#10\n" is not id 10 (every check matches the whole string)."""
    text = raw.strip(" ")
    body = text[1:] if text.startswith("#") else text
    if not body or len(body) > MEM_SEARCH_ID_MAX_CHARS or not ID_CHARS.fullmatch(body):
        raise InvalidArgument(field, f"{shown(raw)}: ids accept only letters, digits and ':_-' "
                              "(a leading '#' is allowed)")
    record = parse_display_id(body)
    if not record:
        raise InvalidArgument(field, f"{body!r} is not a record id; use an id from the index: "
                              "#12 (observation), S12 (summary) or P12 (prompt)")
    ref = common_pb2.Ref(kind=record[0], id=record[1])  # type: ignore[arg-type]
    if ref.id < 1:
        raise InvalidArgument(field, f"{body!r} is not a record id; ids start at 1")
    return display_id(ref), ref


def check_selection_size(count: int, max_details: int) -> None:
    if count > max_details:
        raise InvalidArgument("selectedIds", f"at most {max_details} ids per call (maxDetails), got {count}; "
                              "pick the most relevant ones, then call again for more")


def _selected(raw_ids: Iterable[str], max_details: int) -> tuple[tuple[str, common_pb2.Ref], ...]:
    picked: dict[str, common_pb2.Ref] = {}
    for raw in raw_ids:
        shown_id, ref = parse_record_id(raw)
        picked.setdefault(shown_id, ref)
    check_selection_size(len(picked), max_details)
    return tuple(picked.items())


def validate_mem_search(req: search_pb2.MemSearchRequest) -> MemSearchParams:
    """Every bound of the mem_search schema; the first violation -> InvalidArgument."""
    if req.mode and req.mode not in MEM_SEARCH_MODES:
        raise InvalidArgument("mode", f"must be one of {', '.join(MEM_SEARCH_MODES)}, "
                              f"got {shown(req.mode, 20)}")
    query = _check_query(req.query)
    project = check_project(req.project)
    limit = _bounded(req.limit, "limit", 1, MEM_SEARCH_LIMIT_MAX, MEM_SEARCH_LIMIT_DEFAULT)
    max_details = _bounded(req.max_details, "maxDetails", 1, MEM_SEARCH_DETAILS_MAX, MEM_SEARCH_DETAILS_DEFAULT)
    before = _depth(req, "depth_before", "depthBefore")
    after = _depth(req, "depth_after", "depthAfter")
    continuation = _check_continuation(req.continuation)
    if not continuation and not query.strip():
        raise InvalidArgument("query", "required for a new search (or pass continuation from an "
                              "earlier reply)")
    # Without maxDetails here, the search's own maxDetails applies (checked once the cursor is loaded).
    selected = _selected(req.selected_ids, max_details if req.max_details else MEM_SEARCH_DETAILS_MAX)
    if selected and not continuation:
        raise InvalidArgument("continuation", "required with selectedIds: pick ids from the index of an "
                              "earlier reply and pass its continuation")
    return MemSearchParams(mode=req.mode or MEM_SEARCH_MODE_DEFAULT, query=query, project=project, limit=limit,
                           max_details=max_details, depth_before=before, depth_after=after,
                           continuation=continuation, selected=selected, limit_given=req.limit != 0,
                           max_details_given=req.max_details != 0)


def _tool_use_ids(raw_ids: Iterable[str]) -> tuple[list[int], list[str]]:
    """(numeric row ids, host tool_use_id strings) of get_tool_uses' `ids`."""
    row_ids, host_ids = [], []
    for raw in raw_ids:
        text = raw.strip(" ")  # as parse_record_id: spaces are forgiven, "2\n" or "toolu_2\t" is no id
        if not text or len(text) > TOOL_USE_ID_MAX_CHARS or not ID_CHARS.fullmatch(text):
            raise InvalidArgument("ids", f"{shown(raw)}: ids accept only letters, digits and ':_-' "
                                  "(numeric tool-use ids or host tool_use_id strings)")
        if text.isdigit():
            row_ids.append(int(text))
        else:
            host_ids.append(text)
    return row_ids, host_ids


def _check_tool_use_counts(req: search_pb2.GetToolUsesToolRequest) -> None:
    if len(req.ids) > TOOL_USE_IDS_MAX:
        raise InvalidArgument("ids", f"at most {TOOL_USE_IDS_MAX} ids per call, got {len(req.ids)}")
    if len(req.observation_ids) > TOOL_USE_IDS_MAX:
        raise InvalidArgument("observationIds",
                              f"at most {TOOL_USE_IDS_MAX} ids per call, got {len(req.observation_ids)}")


def validate_tool_uses(req: search_pb2.GetToolUsesToolRequest) -> store_pb2.GetToolUsesRequest:
    """Bounds of get_tool_uses; returns the store query (its limit is the caller's limit)."""
    _check_tool_use_counts(req)
    row_ids, host_ids = _tool_use_ids(req.ids)
    if any(value < 1 for value in req.observation_ids):
        raise InvalidArgument("observationIds", "observation ids start at 1")
    limit = _bounded(req.limit, "limit", 1, TOOL_USES_LIMIT_MAX, TOOL_USES_LIMIT_DEFAULT)
    project = check_project(req.project)
    session = req.content_session_id
    if len(session) > SESSION_ID_MAX_CHARS or CONTROL_CHARS_RE.search(session):
        raise InvalidArgument("contentSessionId",
                              f"at most {SESSION_ID_MAX_CHARS} characters, no control characters")
    if not (row_ids or host_ids or req.observation_ids or session):
        raise InvalidArgument("ids", "give ids, observationIds or contentSessionId (tool-use ids are named "
                              "in mem_search details)")
    return store_pb2.GetToolUsesRequest(ids=row_ids, tool_use_ids=host_ids, project=project,
                                        observation_ids=req.observation_ids, content_session_id=session,
                                        limit=limit)
