"""The seven tools of spec 003's search server, with exactly its parameters and bounds.

Each maps onto SearchService: `Search` (one category, the filters, operators read by
mnemo's own parser; never text handed to FTS5) and, for the full format, `GetRecordDetail`
per row. Spec 003's query syntax: OR, NOT, "quoted phrases", prefix* and `title:` column
filters are operators of mnemo's parser (the query goes to Search with `operators` on and
the store builds the FTS5 expression from quoted tokens); AND is accepted and, like every
term, ranked by bm25 (docs/search.md).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.legacy import render
from gateway.schemas import ISO_DATE_HINT, OBS_TYPES, Schema, integer, obj, project, string, string_array
from gateway.spec import Args, ToolCall, ToolOutput, ToolSpec
from mnemo import vocab as v
from mnemo.errors import InvalidArgument
from mnemo.v1 import common_pb2, search_pb2

LIMIT_DEFAULT, LIMIT_MAX = 20, 100
# SearchRequest's fields under spec 003's argument names, for errors (ToolSpec.arguments).
ARGUMENTS = {"date_start": "dateRange.start", "date_end": "dateRange.end", "order_by": "orderBy", "obs_types": "type"}
RECENT_DEFAULT, RECENT_MAX = 3, 10
RECENT_OBSERVATIONS_PER_SESSION = 5
INDEX_FIRST = " Use format \"index\" (the default) first; \"full\" only for the items you picked."

_DATE_RANGE: Schema = {
    "type": "object", "additionalProperties": False,
    "properties": {"start": string(f"From: {ISO_DATE_HINT}.", max_length=v.DATE_MAX_CHARS),
                   "end": string(f"Until, inclusive: {ISO_DATE_HINT}.", max_length=v.DATE_MAX_CHARS)},
    "description": "Only records created in this range ({start, end}, either may be left out).",
}
_COMMON: dict[str, Schema] = {
    "project": project("Filter by project name."),
    "dateRange": _DATE_RANGE,
    "orderBy": {"type": "string", "enum": ["relevance", "date_desc", "date_asc"], "default": "relevance",
                "description": "Sort order: relevance, date_desc or date_asc."},
    "limit": integer(f"Maximum results (default {LIMIT_DEFAULT}, max {LIMIT_MAX}).", 1, LIMIT_MAX,
                     default=LIMIT_DEFAULT),
    "offset": integer("Number of results to skip.", 0, v.SEARCH_OFFSET_MAX, default=0),
    "format": {"type": "string", "enum": ["index", "full"], "default": "index",
               "description": "index: titles, dates and sources (~10x fewer tokens); full: complete details."},
}
_TYPES: Schema = {"type": ["string", "array"], "maxLength": 32, "maxItems": len(OBS_TYPES),
                  "items": {"type": "string", "enum": OBS_TYPES},
                  "description": f"Observation type(s), one or an array: {', '.join(OBS_TYPES)}."}
_QUERY = string("Search text. OR, NOT, \"quoted phrases\", prefix* and title:word (only in titles) are read "
                "by mnemo's parser; AND is accepted and ranked; anything else is literal text.",
                max_length=v.SEARCH_QUERY_MAX_CHARS, min_length=1)


def _types(value: Any) -> list[str]:
    """`type` as spec 003 allows it: one type or an array of types."""
    if isinstance(value, str):
        if value not in OBS_TYPES:
            raise InvalidArgument("type", f"{value[:40]!r} is not one of {', '.join(OBS_TYPES)}")
        return [value]
    return list(value or [])


@dataclass(frozen=True)
class LegacySearch:
    """Search one category with spec 003's parameters, rendered in its index or full format."""

    category: str  # observations | sessions | prompts
    what: str  # how the reply names the records
    request: Callable[[Args], dict[str, Any]]  # the tool's own fields of the SearchRequest

    async def __call__(self, call: ToolCall, args: Args) -> ToolOutput:
        date_range = args.get("dateRange", {})
        offset = args.get("offset", 0)
        request = search_pb2.SearchRequest(
            limit=args.get("limit", LIMIT_DEFAULT), offset=offset, project=args.get("project", ""),
            categories=[self.category], date_start=date_range.get("start", ""), date_end=date_range.get("end", ""),
            order_by=args.get("orderBy", "relevance"), operators=True, **self.request(args))
        reply: search_pb2.SearchReply = await call.client.call(lambda stub: stub.Search, request)
        rows, total = list(reply.rows), reply.counts.total
        if args.get("format", "index") == "index":
            return ToolOutput(render.index_text(rows, offset, total, self.what))
        return ToolOutput(render.full_text(rows, await _records(call, rows), offset, total, self.what))


async def _records(call: ToolCall, rows: list[common_pb2.IndexRow]) -> list[common_pb2.Record]:
    replies = await asyncio.gather(*(call.client.call(lambda stub: stub.GetRecordDetail,
                                                      search_pb2.RecordDetailRequest(id=row.display_id))
                                     for row in rows))
    return [reply.record for reply in replies]


@dataclass(frozen=True)
class RecentContext:
    """get_recent_context: the last `limit` session summaries and the observations around them."""

    async def __call__(self, call: ToolCall, args: Args) -> ToolOutput:
        name = args.get("project") or os.path.basename(os.path.normpath(call.project_root)) or Path.cwd().name
        limit = args.get("limit", RECENT_DEFAULT)

        async def recent(category: str, count: int) -> list[common_pb2.IndexRow]:
            reply = await call.client.call(lambda stub: stub.Search, search_pb2.SearchRequest(
                limit=count, project=name, categories=[category], order_by="date_desc"))
            return list(reply.rows)

        sessions = await recent("sessions", limit)
        observations, records = await asyncio.gather(
            recent("observations", limit * RECENT_OBSERVATIONS_PER_SESSION), _records(call, sessions))
        summaries = render.full_text(sessions, records, 0, len(sessions), "sessions")
        listed = render.index_text(observations, 0, len(observations), "observations")
        return ToolOutput(f"Recent context for project {name!r}\n\n## Sessions\n{summaries}\n\n"
                          f"## Observations\n{listed}")


def _tool(name: str, description: str, properties: dict[str, Schema], required: str,
          handler: LegacySearch) -> ToolSpec:
    return ToolSpec(name=name, description=description + INDEX_FIRST,
                    input_schema=obj({**properties, **_COMMON}, required=[required]),
                    handler=handler, capability="search", read_only=True, arguments=ARGUMENTS)


LEGACY_TOOLS: list[ToolSpec] = [
    _tool("search_observations", "Full-text search across observation titles, narratives, facts and concepts.",
          {"query": _QUERY, "type": _TYPES,
           "concepts": string_array("Filter by concept tags.", item_max_length=v.TAG_MAX_CHARS),
           "files": string_array("Filter by file paths (partial match).", max_items=v.FILE_FILTERS_MAX)},
          "query", LegacySearch("observations", "observations", lambda a: {
              "query": a["query"], "obs_types": _types(a.get("type")),
              "concepts": a.get("concepts", []), "files": a.get("files", [])})),
    _tool("search_sessions", "Full-text search across session summaries, requests and learnings.",
          {"query": _QUERY}, "query",
          LegacySearch("sessions", "sessions", lambda a: {"query": a["query"]})),
    _tool("search_user_prompts", "Search what the user actually asked, across all sessions.",
          {"query": _QUERY}, "query",
          LegacySearch("prompts", "user prompts", lambda a: {"query": a["query"]})),
    _tool("find_by_concept", "Find observations tagged with a concept.",
          {"concept": string("Concept tag to search for.", max_length=v.TAG_MAX_CHARS, min_length=1)}, "concept",
          LegacySearch("observations", "observations", lambda a: {"concepts": [a["concept"]]})),
    _tool("find_by_file", "Find observations that reference a file path.",
          {"filePath": string("File path to search for (partial match).", min_length=1)}, "filePath",
          LegacySearch("observations", "observations", lambda a: {"files": [a["filePath"]]})),
    _tool("find_by_type", "Find observations by type.", {"type": {**_TYPES, "minItems": 1}}, "type",
          LegacySearch("observations", "observations", lambda a: {"obs_types": _types(a["type"])})),
    ToolSpec(
        name="get_recent_context",
        description=("Recent session summaries and observations of a project (default: this directory's). "
                     "Observations come in the index format: search them with format \"full\" only for those "
                     "you need first."),
        input_schema=obj({
            "project": project("Project name (default: the working directory's basename)."),
            "limit": integer(f"Recent sessions (default {RECENT_DEFAULT}, max {RECENT_MAX}).", 1, RECENT_MAX,
                             default=RECENT_DEFAULT),
        }),
        handler=RecentContext(), capability="search", read_only=True,
    ),
]
