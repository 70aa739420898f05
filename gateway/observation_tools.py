"""The server runtime's five observation_* tools, and what the runtime changes in the list.

Listed only in the server runtime (settings server_url + token_file, mnemo.remote), on top
of the profile's tools, and only when the server reports the "observations" capability.
Under the local runtime they are absent from tools/list, and calling one answers a
FAILED_PRECONDITION naming the settings that enable it (not "unknown tool": an agent
prompt written for a team server should learn why).

Everything else keeps its place in the server runtime: the memory and corpus tools are
served by the server (its capabilities decide, as for a local stack), and the code tools
read the project's files in the gateway process, which the server runtime does not change.
No tool of the default profile needs the local home, so none is hidden for that reason.
"""

from __future__ import annotations

import json
from typing import Any

from gateway import convert
from gateway.schemas import BOOL, INT, OBS_TYPES, STR, Schema, array_of, integer, obj, project, shape, string
from gateway.spec import Args, ToolOutput, ToolSpec, Unary, text_only, with_structure
from mnemo import vocab as v
from mnemo.errors import FailedPrecondition
from mnemo.remote import is_server_runtime
from mnemo.timefmt import MAX_EPOCH_MS
from mnemo.v1 import search_pb2

CAPABILITY = "observations"


def _json(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _search_request(a: Args) -> search_pb2.ObservationSearchRequest:
    return search_pb2.ObservationSearchRequest(project_id=a.get("projectId", ""), query=a["query"],
                                               platform_source=a.get("platformSource", ""), limit=a.get("limit", 0))


def _event_request(a: Args) -> search_pb2.ObservationEventRequest:
    return search_pb2.ObservationEventRequest(
        project_id=a.get("projectId", ""), event_type=a["eventType"], source_type=a.get("sourceType", ""),
        server_session_id=a.get("serverSessionId", ""), content_session_id=a.get("contentSessionId", ""),
        memory_session_id=a.get("memorySessionId", ""), platform_source=a.get("platformSource", ""),
        payload_json=_json(a.get("payload")), occurred_at_epoch=int(a.get("occurredAtEpoch", 0)),
        generate=bool(a.get("generate", False)))


def _search_out(reply: search_pb2.ObservationSearchReply) -> ToolOutput:
    return ToolOutput(reply.text, {"total": reply.total, "rows": [convert.index_row(r) for r in reply.rows]})


_SESSION = string(max_length=v.SESSION_ID_MAX_CHARS)
_PLATFORM = string(max_length=v.PLATFORM_MAX_CHARS)
_QUERY = string(max_length=v.SEARCH_QUERY_MAX_CHARS, min_length=1)


def _query_schema(default: int, maximum: int) -> Schema:
    return obj({"projectId": project(), "query": _QUERY, "platformSource": _PLATFORM,
                "limit": integer("", 1, maximum, default=default)}, required=["query"])


OBSERVATION_TOOLS: list[ToolSpec] = [
    ToolSpec(
        name="observation_add",
        description="Store a manual observation on the team server; metadata is kept as facts.",
        input_schema=obj({
            "projectId": project(),
            "serverSessionId": _SESSION,
            "kind": {"type": "string", "enum": OBS_TYPES, "default": v.DEFAULT_OBSERVATION_TYPE},
            "content": string(max_length=v.OBSERVATION_CONTENT_MAX_CHARS, min_length=1),
            "metadata": {"type": "object", "maxProperties": v.OBSERVATION_METADATA_KEYS_MAX},
        }, required=["content"]),
        handler=Unary(
            lambda stub: stub.ObservationAdd,
            lambda a: search_pb2.ObservationAddRequest(
                project_id=a.get("projectId", ""), server_session_id=a.get("serverSessionId", ""),
                kind=a.get("kind", ""), content=a["content"], metadata_json=_json(a.get("metadata"))),
            with_structure(lambda r: {"id": r.id, "created": r.created}),
        ),
        capability=CAPABILITY,
        read_only=False,
        retry_note="Search for it (observation_search) before adding it again.",
        output_schema=shape({"id": INT, "created": BOOL}),
        byte_limits={"projectId": v.PROJECT_MAX_BYTES},
    ),
    ToolSpec(
        name="observation_record_event",
        description="Record an agent event on the team server; generate=true compiles observations from it "
                    "in a job (see observation_generation_status). occurredAtEpoch: epoch ms.",
        input_schema=obj({
            "projectId": project(),
            "eventType": string(max_length=v.EVENT_TYPE_MAX_CHARS, min_length=1),
            "sourceType": {"type": "string", "enum": list(v.EVENT_SOURCE_TYPES), "default": "api"},
            "serverSessionId": _SESSION,
            "contentSessionId": _SESSION,
            "memorySessionId": _SESSION,
            "platformSource": _PLATFORM,
            "payload": {},
            "occurredAtEpoch": {"type": "number", "minimum": 0, "maximum": MAX_EPOCH_MS},
            "generate": {"type": "boolean", "default": False},
        }, required=["eventType"]),
        handler=Unary(lambda stub: stub.ObservationRecordEvent, _event_request,
                      with_structure(lambda r: {"eventId": r.event_id, "jobId": r.job_id})),
        capability=CAPABILITY,
        read_only=False,
        retry_note="Retrying is safe: an event is kept once.",
        output_schema=shape({"eventId": INT, "jobId": STR}),
        byte_limits={"projectId": v.PROJECT_MAX_BYTES},
    ),
    ToolSpec(
        name="observation_search",
        description="Full-text search over the team server's observations only.",
        input_schema=_query_schema(v.OBSERVATION_SEARCH_LIMIT_DEFAULT, v.OBSERVATION_SEARCH_LIMIT_MAX),
        handler=Unary(lambda stub: stub.ObservationSearch, _search_request, _search_out),
        capability=CAPABILITY,
        read_only=True,
        byte_limits={"projectId": v.PROJECT_MAX_BYTES},
        output_schema=shape({"total": INT, "rows": array_of(shape({"id": STR, "recordId": INT, "title": STR}))}),
    ),
    ToolSpec(
        name="observation_context",
        description="The observations most relevant to a query, rendered for context injection.",
        input_schema=_query_schema(v.OBSERVATION_CONTEXT_LIMIT_DEFAULT, v.OBSERVATION_CONTEXT_LIMIT_MAX),
        handler=Unary(lambda stub: stub.ObservationContext, _search_request, text_only),
        capability=CAPABILITY,
        read_only=True,
        byte_limits={"projectId": v.PROJECT_MAX_BYTES},
    ),
    ToolSpec(
        name="observation_generation_status",
        description="State of an observation generation job: queued, running, done or failed, with counts.",
        input_schema=obj({"jobId": string(max_length=v.JOB_ID_MAX_CHARS, min_length=1)}, required=["jobId"]),
        handler=Unary(lambda stub: stub.ObservationGenerationStatus,
                      lambda a: search_pb2.ObservationJobRequest(job_id=a["jobId"]),
                      with_structure(lambda r: {"status": r.status, "events": r.events,
                                                "observations": r.observations, "error": r.error})),
        capability=CAPABILITY,
        read_only=True,
        output_schema=shape({"status": STR, "events": INT, "observations": INT}),
    ),
]
SERVER_ONLY = frozenset(tool.name for tool in OBSERVATION_TOOLS)


def runtime_tools(settings: Any, profile: list[ToolSpec]) -> list[ToolSpec]:
    """The tools this gateway may list: the profile's, plus the observation tools in the server runtime."""
    return [*profile, *OBSERVATION_TOOLS] if is_server_runtime(settings) else profile


def refused_locally(name: str, settings: Any) -> FailedPrecondition | None:
    """The error of calling a server-only tool under the local runtime, else None."""
    if name not in SERVER_ONLY or is_server_runtime(settings):
        return None
    return FailedPrecondition(f"{name} requires the server runtime: set server_url and token_file "
                              "(`mnemo install claude-code --server HOST:PORT --token-file FILE`)")
