"""Reply messages -> structuredContent dicts, field by field.

Written out rather than dumped with protobuf's JSON printer, which renders int64 as
strings and drops zero values: programs reading structuredContent get numbers as
numbers and every declared field.
"""

from __future__ import annotations

from typing import Any

from mnemo.v1 import common_pb2, search_pb2

_KINDS = {
    common_pb2.DOC_KIND_OBSERVATION: "observation",
    common_pb2.DOC_KIND_SUMMARY: "summary",
    common_pb2.DOC_KIND_PROMPT: "prompt",
}


def index_row(row: common_pb2.IndexRow) -> dict[str, Any]:
    return {
        "id": row.display_id,
        "kind": _KINDS.get(row.ref.kind, "unknown"),
        "recordId": row.ref.id,
        "type": row.type,
        "title": row.title,
        "createdAt": row.created_at,
        "createdAtEpoch": row.created_at_epoch,
        "tokens": row.token_estimate,
        "score": row.score,
        "project": row.project,
        "file": row.file,
    }


def observation(obs: common_pb2.Observation) -> dict[str, Any]:
    return {
        "kind": "observation",
        "id": obs.id,
        "type": obs.type,
        "title": obs.title,
        "subtitle": obs.subtitle,
        "narrative": obs.narrative,
        "facts": list(obs.facts),
        "concepts": list(obs.concepts),
        "filesRead": list(obs.files_read),
        "filesModified": list(obs.files_modified),
        "project": obs.project,
        "memorySessionId": obs.memory_session_id,
        "promptNumber": obs.prompt_number,
        "createdAt": obs.created_at,
        "createdAtEpoch": obs.created_at_epoch,
        "toolUseIds": list(obs.tool_use_ids),
    }


def summary(s: common_pb2.Summary) -> dict[str, Any]:
    return {
        "kind": "summary",
        "id": s.id,
        "request": s.request,
        "investigated": s.investigated,
        "learned": s.learned,
        "completed": s.completed,
        "nextSteps": s.next_steps,
        "notes": s.notes,
        "project": s.project,
        "memorySessionId": s.memory_session_id,
        "createdAt": s.created_at,
        "createdAtEpoch": s.created_at_epoch,
    }


def prompt(p: common_pb2.UserPrompt) -> dict[str, Any]:
    return {
        "kind": "prompt",
        "id": p.id,
        "promptText": p.prompt_text,
        "promptNumber": p.prompt_number,
        "contentSessionId": p.content_session_id,
        "project": p.project,
        "createdAt": p.created_at,
        "createdAtEpoch": p.created_at_epoch,
    }


def record(rec: common_pb2.Record) -> dict[str, Any]:
    which = rec.WhichOneof("record")
    if which == "observation":
        return observation(rec.observation)
    if which == "summary":
        return summary(rec.summary)
    if which == "prompt":
        return prompt(rec.prompt)
    return {"kind": "observation", "id": 0}


def tool_use(t: common_pb2.ToolUse) -> dict[str, Any]:
    return {
        "id": t.id,
        "toolUseId": t.tool_use_id,
        "toolName": t.tool_name,
        "contentSessionId": t.content_session_id,
        "project": t.project,
        "input": t.tool_input,
        "response": t.tool_response,
        "inputTruncated": t.input_truncated,
        "responseTruncated": t.response_truncated,
        "inputSize": t.input_size,
        "responseSize": t.response_size,
        "createdAt": t.created_at,
        "observationIds": list(t.observation_ids),
    }


def search_reply(reply: search_pb2.SearchReply) -> dict[str, Any]:
    return {
        "total": reply.counts.total,
        "counts": {"observations": reply.counts.observations, "summaries": reply.counts.summaries,
                   "prompts": reply.counts.prompts},
        "strategy": reply.strategy,
        "notice": reply.notice,
        "rows": [index_row(r) for r in reply.rows],
    }


def timeline_reply(reply: search_pb2.TimelineReply) -> dict[str, Any]:
    return {"anchor": reply.anchor, "anchorIndex": reply.anchor_index, "items": [index_row(r) for r in reply.items]}


def observations_reply(reply: search_pb2.GetObservationsReply) -> dict[str, Any]:
    return {"observations": [observation(o) for o in reply.observations]}


def mem_search_reply(reply: search_pb2.MemSearchReply) -> dict[str, Any]:
    return {
        "total": reply.total,
        "offset": reply.offset,
        "hasMore": reply.has_more,
        "continuation": reply.continuation,
        "strategy": reply.strategy,
        "rows": [index_row(r) for r in reply.rows],
        "details": [
            {
                "id": d.row.display_id,
                "record": record(d.record),
                "row": index_row(d.row),
                "context": [index_row(c) for c in d.context],
                "toolUses": [{"id": t.id, "toolUseId": t.tool_use_id, "toolName": t.tool_name} for t in d.tool_uses],
            }
            for d in reply.details
        ],
    }


def tool_uses_reply(reply: search_pb2.GetToolUsesReply) -> dict[str, Any]:
    return {"toolUses": [tool_use(t) for t in reply.tool_uses]}


def save_memory_reply(reply: search_pb2.SaveMemoryReply) -> dict[str, Any]:
    return {"id": reply.id, "created": reply.created}
