"""The tool table: the ONE declarative place where every MCP tool is defined.

Each ToolSpec holds the name, description, input schema, output schema (search tools and
save_memory), annotations (read tools: readOnlyHint), the handler, the backend
capability it needs (tools/list shows a tool only when search_svc reports it), and the
UTF-8 byte limits that JSON Schema cannot express.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from gateway import handlers as h
from gateway.schemas import (
    ISO_DATE_HINT,
    MEM_SEARCH_OUT,
    OBS_TYPES,
    OBSERVATIONS_OUT,
    SAVE_MEMORY_OUT,
    SEARCH_OUT,
    TIMELINE_OUT,
    TOOL_USES_OUT,
    corpus_name,
    integer,
    obj,
    project,
    string,
    string_array,
)

HOST_PREFIX = "mcp__plugin_mnemo_mcp-search__"
NAME_PATTERN = r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$"

Handler = Callable[[h.ToolCall, dict], Awaitable[h.ToolOutput]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    capability: str | None
    read_only: bool
    output_schema: dict[str, Any] | None = None
    byte_limits: dict[str, int] = field(default_factory=dict)

    @property
    def annotations(self) -> dict[str, Any] | None:
        return {"readOnlyHint": True} if self.read_only else None


_ORDER_BY = {"type": "string", "enum": ["relevance", "date_desc", "date_asc"],
             "description": "relevance (default; newest first without a query), date_desc or date_asc."}

TOOLS: list[ToolSpec] = [
    ToolSpec(
        name="important_workflow",
        description=h.WORKFLOW_NOTE,
        input_schema=obj({}),
        handler=h.important_workflow,
        capability=None,
        read_only=True,
    ),
    ToolSpec(
        name="mem_search",
        description=(
            "Search memory (observations, session summaries, prompts) with filter-before-fetch. "
            "guided (default): call with query -> index page + continuation; then call with continuation "
            "(next page) or continuation + selectedIds (at most maxDetails ids the index showed) -> full "
            "records with timeline context and the tool uses behind them. auto: index, top details and "
            "context in one call."
        ),
        input_schema=obj({
            "mode": {"type": "string", "enum": ["guided", "auto"], "default": "guided",
                     "description": "guided: index first, details for selected ids; auto: everything at once."},
            "query": string("Search query; required for a new search, up to 500 characters (1,024 bytes).",
                            max_length=500),
            "project": string("Only this project (at most 256 bytes).", max_length=256),
            "limit": integer("Index rows per page.", 1, 20),
            "maxDetails": integer("Most records detailed per call.", 1, 5),
            "depthBefore": integer("Timeline rows before each detailed record.", 0, 3),
            "depthAfter": integer("Timeline rows after each detailed record.", 0, 3),
            "continuation": {"type": "string", "minLength": 27, "maxLength": 27,
                             "pattern": "^ms_[A-Za-z0-9_-]{24}$",
                             "description": "Token from an earlier mem_search reply."},
            "selectedIds": {"type": "array", "items": {"type": ["string", "integer"]},
                            "description": "Ids picked from this search's index (e.g. \"#12\", \"S3\", 12)."},
        }),
        handler=h.mem_search,
        capability="mem_search",
        read_only=True,
        output_schema=MEM_SEARCH_OUT,
        byte_limits={"query": 1024, "project": 256},
    ),
    ToolSpec(
        name="search",
        description=("Legacy (use mem_search). Step 1: search memory; returns an index with ids "
                     "(#123 observation, #S12 summary, #P7 prompt)."),
        input_schema=obj({
            "query": string("Search text; empty lists by filters only.", max_length=10000),
            "limit": integer("Maximum rows.", 1, 100, default=20),
            "offset": integer("Rows to skip.", 0, 100000),
            "project": project(),
            "platformSource": string("Only this host family (claude, codex, cursor...).", max_length=64),
            "type": {"type": "string", "enum": ["observations", "sessions", "prompts"],
                     "description": "Only one kind of record (default: all)."},
            "obs_type": string(f"Comma-separated observation types: {', '.join(OBS_TYPES)}.", max_length=500),
            "concepts": string_array("Only observations with one of these concept tags.", item_max_length=100),
            "files": string_array("Only observations touching a path containing one of these.", max_items=20),
            "dateStart": string(f"From this instant, inclusive: {ISO_DATE_HINT}.", max_length=64),
            "dateEnd": string(f"Until this instant, inclusive (a bare date = the whole day): {ISO_DATE_HINT}.",
                              max_length=64),
            "orderBy": _ORDER_BY,
        }),
        handler=h.search,
        capability="search",
        read_only=True,
        output_schema=SEARCH_OUT,
    ),
    ToolSpec(
        name="timeline",
        description=("Legacy (use mem_search). Step 2: records around an anchor in time order. Give anchor "
                     "(observation id, S<id> summary, or ISO timestamp) or query (its best match anchors)."),
        input_schema=obj({
            "anchor": {"type": ["string", "integer"], "maxLength": 64,
                       "description": "Observation id (123 or \"#123\"), \"S12\" for a summary, or an ISO timestamp."},
            "query": string("Find the anchor by search instead (exactly one of anchor and query).", max_length=500),
            "depth_before": integer("Items before the anchor.", 0, 20, default=3),
            "depth_after": integer("Items after the anchor.", 0, 20, default=3),
            "project": project(),
        }),
        handler=h.timeline,
        capability="search",
        read_only=True,
        output_schema=TIMELINE_OUT,
    ),
    ToolSpec(
        name="get_observations",
        description="Legacy (use mem_search). Step 3: full details for ids filtered from search/timeline.",
        input_schema=obj({
            "ids": {"type": "array", "minItems": 1, "maxItems": 50,
                    "items": {"type": "integer", "minimum": 1}, "description": "Observation ids (1-50)."},
            "orderBy": {"type": "string", "enum": ["date_desc", "date_asc"], "description": "Default date_desc."},
            "project": project("Only observations of this project."),
            "limit": integer("Maximum observations returned.", 1, 50),
        }, required=["ids"]),
        handler=h.get_observations,
        capability="search",
        read_only=True,
        output_schema=OBSERVATIONS_OUT,
    ),
    ToolSpec(
        name="get_tool_uses",
        description=("Layer 4: the raw tool input/response recorded behind observations (each capped, cuts "
                     "marked). Use only when the full records (mem_search details, get_observations) could not "
                     "answer."),
        input_schema=obj({
            "ids": {"type": "array", "maxItems": 20, "items": {"type": ["string", "integer"], "maxLength": 128},
                    "description": "Tool-use ids from mem_search details, or host tool_use_id strings."},
            "observationIds": {"type": "array", "maxItems": 20, "items": {"type": "integer", "minimum": 1},
                               "description": "Observation ids whose tool uses are wanted."},
            "limit": integer("Maximum tool uses returned.", 1, 20, default=5),
            "project": project("Only this project."),
            "contentSessionId": string("Only this host session.", max_length=256),
        }),
        handler=h.get_tool_uses,
        capability="tool_uses",
        read_only=True,
        output_schema=TOOL_USES_OUT,
    ),
    ToolSpec(
        name="save_memory",
        description="Save one memory (an observation) for later sessions; returns its id.",
        input_schema=obj({
            "text": string("The memory to keep.", max_length=20000, min_length=1),
            "title": string("Short title (default: the first line of text).", max_length=300),
            "type": {"type": "string", "enum": OBS_TYPES, "description": "Observation type (default discovery)."},
            "concepts": string_array("Concept tags.", max_items=20, item_max_length=100),
            "files": string_array("Related file paths.", max_items=50),
            "project": project("Project (default \"default\")."),
        }, required=["text"]),
        handler=h.save_memory,
        capability="write",
        read_only=False,
        output_schema=SAVE_MEMORY_OUT,
    ),
    ToolSpec(
        name="work_state_write",
        description="Write the project's work state (what is in progress); history is kept.",
        input_schema=obj({
            "project": project("Project (required)."),
            "key": string("State key (default \"default\").", max_length=128),
            "content": string("The state text.", max_length=65536, min_length=1),
            "expected_version": {"type": "integer", "minimum": 0,
                                 "description": "Write only if the current version equals this (0 = always)."},
        }, required=["project", "content"]),
        handler=h.work_state_write,
        capability="work_state",
        read_only=False,
    ),
    ToolSpec(
        name="work_state_read",
        description="Read the project's work state and, optionally, earlier versions.",
        input_schema=obj({
            "project": project("Project (required)."),
            "key": string("State key (default \"default\").", max_length=128),
            "history": integer("Earlier versions to include.", 0, 50, default=0),
        }, required=["project"]),
        handler=h.work_state_read,
        capability="work_state",
        read_only=True,
    ),
    ToolSpec(
        name="session_start_context",
        description="The start-of-session context for a project: recent observations and summaries.",
        input_schema=obj({
            "project": project("Project (required)."),
            "token_budget": integer("Token budget of the text (default from config).", 100, 20000),
        }, required=["project"]),
        handler=h.session_start_context,
        capability="context",
        read_only=True,
    ),
    ToolSpec(
        name="build_corpus",
        description="Build a knowledge corpus from filtered observations (every filter honoured, alone or combined).",
        input_schema=obj({
            "name": corpus_name(),
            "description": string("What the corpus is about.", max_length=2000),
            "project": project(),
            "types": {"type": "array", "maxItems": len(OBS_TYPES), "items": {"type": "string", "enum": OBS_TYPES},
                      "description": "Observation types to include."},
            "concepts": string_array("Concept tags to include.", item_max_length=100),
            "files": string_array("File path substrings to include."),
            "query": string("Search text the observations must match.", max_length=10000),
            "dateStart": string(f"From: {ISO_DATE_HINT}.", max_length=64),
            "dateEnd": string(f"Until (inclusive): {ISO_DATE_HINT}.", max_length=64),
            "limit": integer("Most observations in the snapshot.", 1, 10000, default=500),
        }, required=["name"]),
        handler=h.build_corpus,
        capability="corpus",
        read_only=False,
    ),
    ToolSpec(
        name="list_corpora",
        description="List knowledge corpora: stats, priming state and the last job's outcome.",
        input_schema=obj({}),
        handler=h.list_corpora,
        capability="corpus",
        read_only=True,
    ),
    ToolSpec(
        name="prime_corpus",
        description="Prime a corpus (index + digest, opens a knowledge session); long, reports progress.",
        input_schema=obj({"name": corpus_name()}, required=["name"]),
        handler=h.prime_corpus,
        capability="corpus",
        read_only=False,
    ),
    ToolSpec(
        name="query_corpus",
        description="Ask a primed corpus: cited passages, plus a grounded answer when an LLM is configured.",
        input_schema=obj({
            "name": corpus_name(),
            "question": string("The question.", max_length=2000, min_length=1),
            "limit": integer("Passages to return.", 1, 20, default=8),
        }, required=["name", "question"]),
        handler=h.query_corpus,
        capability="corpus",
        read_only=False,
    ),
    ToolSpec(
        name="rebuild_corpus",
        description="Re-run a corpus's stored filter: refresh snapshot and stats, mark the index stale.",
        input_schema=obj({"name": corpus_name()}, required=["name"]),
        handler=h.rebuild_corpus,
        capability="corpus",
        read_only=False,
    ),
    ToolSpec(
        name="reprime_corpus",
        description="Clear a corpus's knowledge-session history and prime it again; reports progress.",
        input_schema=obj({"name": corpus_name()}, required=["name"]),
        handler=h.reprime_corpus,
        capability="corpus",
        read_only=False,
    ),
]

BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}

def advertised(capabilities: set[str]) -> list[ToolSpec]:
    """Tools the backend can serve now: no capability needed, or one it reported."""
    return [t for t in TOOLS if t.capability is None or t.capability in capabilities]
