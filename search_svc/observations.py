"""The server runtime's observation_* tools: manual observations, agent events compiled into
observations by a job, full-text search over observations only, and context injection.

- observation_add stores one observation like save_memory does (the store records its
  writer); `metadata`, a JSON object, is kept as facts `key: value`.
- observation_record_event keeps the event as a raw tool-use row (tool name = event type,
  input = the payload), idempotent on a key derived from the event, so a retried call
  stores it once. With `generate`, a job compiles it into observations with the hooks'
  deterministic rules (capture.observer: the same event always gives the same
  observations, so a rerun is deduplicated by the store's content hash).
- A job's state lives in the store's work state (project = the event's project, key =
  `observation-job:<uuid>`), so any search_svc replica answers its status. The job id names
  both: `<uuid>.<project>`. A replica that dies mid-job leaves it `running`; recording the
  same event again with generate starts a fresh job (nothing is stored twice).
- observation_search and observation_context ask the store's lexical index (FTS5 on SQLite,
  tsvector on PostgreSQL) for observations only: no vector search, so the answer is the
  server's full-text ranking, every filter applied in the store.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mnemo.config import Settings
from mnemo.errors import InvalidArgument, MnemoError, NotFound
from mnemo.privacy import clean
from mnemo.rpc_context import time_remaining
from mnemo.timefmt import check_epoch, now_ms
from mnemo.v1 import common_pb2, search_pb2, store_pb2
from mnemo.vocab import (
    DEFAULT_OBSERVATION_TYPE,
    DEFAULT_PROJECT,
    EVENT_PAYLOAD_MAX_BYTES,
    EVENT_SOURCE_TYPES,
    EVENT_TYPE_MAX_CHARS,
    EVIDENCE_NOTICE,
    JOB_ID_MAX_CHARS,
    OBSERVATION_CONTENT_MAX_CHARS,
    OBSERVATION_CONTEXT_LIMIT_DEFAULT,
    OBSERVATION_CONTEXT_LIMIT_MAX,
    OBSERVATION_METADATA_KEYS_MAX,
    OBSERVATION_METADATA_MAX_BYTES,
    OBSERVATION_SEARCH_LIMIT_DEFAULT,
    OBSERVATION_SEARCH_LIMIT_MAX,
    OBSERVATION_TYPES,
    PLATFORM_MAX_CHARS,
    SEARCH_QUERY_MAX_CHARS,
    SESSION_ID_MAX_CHARS,
    default_session_ids,
)
from search_svc.backend import Backend
from search_svc.render import Renderer, inline
from search_svc.requests import check_limit
from search_svc.writes import memory_session_id, memory_title, one_line, project_name

JOB_KEY_PREFIX = "observation-job:"
FACT_MAX_CHARS = 500


def _project(value: str) -> str:
    try:
        return project_name(value) if value.strip() else DEFAULT_PROJECT
    except InvalidArgument as err:
        raise InvalidArgument("projectId", err.rule) from None


def _bounded(value: str, field: str, max_chars: int) -> str:
    if len(value) > max_chars:
        raise InvalidArgument(field, f"at most {max_chars:,} characters, got {len(value):,}")
    return value


def _metadata_facts(metadata_json: str) -> list[str]:
    if not metadata_json:
        return []
    if len(metadata_json.encode("utf-8")) > OBSERVATION_METADATA_MAX_BYTES:
        raise InvalidArgument("metadata", f"at most {OBSERVATION_METADATA_MAX_BYTES:,} bytes as JSON")
    try:
        metadata = json.loads(metadata_json)
    except ValueError:
        raise InvalidArgument("metadata", "must be a JSON object") from None
    if not isinstance(metadata, dict):
        raise InvalidArgument("metadata", "must be an object")
    if len(metadata) > OBSERVATION_METADATA_KEYS_MAX:
        raise InvalidArgument("metadata", f"at most {OBSERVATION_METADATA_KEYS_MAX} keys, got {len(metadata)}")
    facts = []
    for key, value in metadata.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        fact = one_line(clean(f"{key}: {shown}"), FACT_MAX_CHARS)
        if fact:
            facts.append(fact)
    return facts


def parse_job_id(job_id: str) -> tuple[str, str]:
    """(project, work-state key) of a job id `<uuid hex>.<project>`; InvalidArgument otherwise."""
    if not job_id or len(job_id) > JOB_ID_MAX_CHARS:
        raise InvalidArgument("jobId", f"required, at most {JOB_ID_MAX_CHARS} characters")
    head, dot, project = job_id.partition(".")
    if not dot or len(head) != 32 or any(c not in "0123456789abcdef" for c in head) or not project:
        raise InvalidArgument("jobId", "not a job id observation_record_event returned")
    return project, JOB_KEY_PREFIX + head


class Observations:
    """The five RPCs of the server runtime's observation tools, over store_svc."""

    def __init__(self, backend: Backend, settings: Settings, jobs: ThreadPoolExecutor | None = None):
        self.store = backend.store
        self.renderer = Renderer(settings.display_tz)
        # One worker: jobs are short rule runs; a queue keeps a burst of events from
        # competing with the RPCs for the store.
        self._jobs = jobs or ThreadPoolExecutor(max_workers=1, thread_name_prefix="obs-job")

    def capabilities(self) -> list[str]:
        return ["observations"]

    def close(self) -> None:
        self._jobs.shutdown(wait=True)

    # -- observation_add -------------------------------------------------------------------
    def add(self, req: search_pb2.ObservationAddRequest) -> search_pb2.ObservationAddReply:
        if not req.content.strip():
            raise InvalidArgument("content", "required: the observation's text")
        text = clean(_bounded(req.content, "content", OBSERVATION_CONTENT_MAX_CHARS))
        if not text.strip():
            raise InvalidArgument("content", "nothing is left after removing <private> regions; nothing was saved")
        kind = req.kind or DEFAULT_OBSERVATION_TYPE
        if kind not in OBSERVATION_TYPES:
            raise InvalidArgument("kind", f"must be one of {', '.join(OBSERVATION_TYPES)}, got {inline(kind, 40)!r}")
        project = _project(req.project_id)
        session = clean(_bounded(req.server_session_id, "serverSessionId", SESSION_ID_MAX_CHARS))
        session = one_line(session) or memory_session_id(project)
        observation = common_pb2.Observation(memory_session_id=session, project=project, type=kind,
                                             title=memory_title("", text), narrative=text,
                                             facts=_metadata_facts(req.metadata_json))
        added = self.store.stub.AddObservations(store_pb2.AddObservationsRequest(observations=[observation]))
        oid, created = added.ids[0], added.created[0]
        verb = "Added observation" if created else "Already stored (identical observation) as"
        return search_pb2.ObservationAddReply(
            text=f'{verb} #{oid} ({kind}) in project "{inline(project, 120)}": {inline(observation.title, 120)}.',
            id=oid, created=created)

    # -- observation_record_event -----------------------------------------------------------
    def record_event(self, req: search_pb2.ObservationEventRequest) -> search_pb2.ObservationEventReply:
        event_type = one_line(clean(_bounded(req.event_type, "eventType", EVENT_TYPE_MAX_CHARS)))
        if not event_type:
            raise InvalidArgument("eventType", "required: what happened (a host event or tool name)")
        source = req.source_type or "api"
        if source not in EVENT_SOURCE_TYPES:
            raise InvalidArgument("sourceType", f"must be one of {', '.join(EVENT_SOURCE_TYPES)}")
        if len(req.payload_json.encode("utf-8")) > EVENT_PAYLOAD_MAX_BYTES:
            raise InvalidArgument("payload", f"at most {EVENT_PAYLOAD_MAX_BYTES:,} bytes as JSON")
        try:
            payload = json.loads(req.payload_json) if req.payload_json else None
        except ValueError:
            raise InvalidArgument("payload", "must be JSON") from None
        check_epoch("occurredAtEpoch", req.occurred_at_epoch)
        # Events are filed under their session, whose platform the store already knows.
        _bounded(req.platform_source, "platformSource", PLATFORM_MAX_CHARS)
        project = _project(req.project_id)
        session = next((s for s in (req.content_session_id, req.server_session_id, req.memory_session_id)
                        if s.strip()), "")
        session = one_line(clean(_bounded(session, "contentSessionId", SESSION_ID_MAX_CHARS))) \
            or default_session_ids(project)[1]
        payload_text = clean(req.payload_json) if req.payload_json else ""
        # The same event recorded twice (a retry after a lost reply) gets the same key.
        key = hashlib.sha256("\0".join((project, session, event_type, source, str(req.occurred_at_epoch),
                                        payload_text)).encode("utf-8", "replace")).hexdigest()[:32]
        tool_use = self.store.stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
            content_session_id=session, memory_session_id=req.memory_session_id and one_line(clean(
                req.memory_session_id[:SESSION_ID_MAX_CHARS])),
            project=project, tool_use_id=f"event:{key}", tool_name=event_type,
            tool_input=payload_text, tool_response=json.dumps({"sourceType": source}),
            cwd=str(payload.get("cwd", ""))[:4096] if isinstance(payload, dict) else "",
            created_at_epoch=req.occurred_at_epoch,  # 0: now
        )))
        text = f'Recorded event "{inline(event_type, 80)}" as #{tool_use.id} in project "{inline(project, 120)}".'
        if not req.generate:
            return search_pb2.ObservationEventReply(text=text, event_id=tool_use.id)
        job_id = f"{uuid.uuid4().hex}.{project}"
        self._write_job(job_id, "queued")
        context = contextvars.copy_context()  # the caller's identity goes with the job
        self._jobs.submit(context.run, self._run_job, job_id, tool_use, payload, key)
        return search_pb2.ObservationEventReply(
            text=f"{text} Generating observations: job {job_id} (observation_generation_status).",
            event_id=tool_use.id, job_id=job_id)

    def _run_job(self, job_id: str, event: common_pb2.ToolUse, payload: Any, key: str) -> None:
        time_remaining.set(None)  # the RPC that queued the job has returned: its deadline is not ours
        try:
            self._write_job(job_id, "running", events=1)
            drafts = _compile(event, payload)
            ids: list[int] = []
            if drafts:
                observations = [
                    common_pb2.Observation(
                        memory_session_id=event.memory_session_id or event.content_session_id,
                        project=event.project, type=d.type, title=d.title, subtitle=d.subtitle,
                        narrative=d.narrative, facts=d.facts, concepts=d.concepts, files_read=d.files_read,
                        files_modified=d.files_modified, tool_use_ids=[event.id],
                        created_at_epoch=event.created_at_epoch,
                        external_id=f"mnemo:event:{key}:{i}")
                    for i, d in enumerate(drafts)]
                ids = list(self.store.stub.AddObservations(
                    store_pb2.AddObservationsRequest(observations=observations)).ids)
            self._write_job(job_id, "done", events=1, observations=len(ids), ids=ids)
        except Exception as err:  # noqa: BLE001 - a failed job is reported through its status
            message = err.message if isinstance(err, MnemoError) else f"{type(err).__name__}: {err}"
            # The store gone too: the job stays "running", as the module says.
            with contextlib.suppress(MnemoError):
                self._write_job(job_id, "failed", events=1, error=message[:500])

    def _write_job(self, job_id: str, status: str, **fields: Any) -> None:
        project, key = parse_job_id(job_id)
        content = json.dumps({"status": status, "updated_at_epoch": now_ms(), **fields})
        self.store.stub.WriteWorkState(store_pb2.WriteWorkStateRequest(project=project, key=key, content=content))

    # -- observation_generation_status ------------------------------------------------------
    def job_status(self, req: search_pb2.ObservationJobRequest) -> search_pb2.ObservationJobReply:
        project, key = parse_job_id(req.job_id)
        found = self.store.stub.ReadWorkState(store_pb2.ReadWorkStateRequest(project=project, key=key))
        if not found.HasField("current"):
            raise NotFound(f"jobId: no job {inline(req.job_id, 80)!r}")
        state = json.loads(found.current.content)
        reply = search_pb2.ObservationJobReply(job_id=req.job_id, status=state["status"],
                                               events=state.get("events", 0),
                                               observations=state.get("observations", 0),
                                               error=state.get("error", ""))
        ids = ", ".join(f"#{i}" for i in state.get("ids", [])[:50])
        reply.text = (f"Job {req.job_id}: {reply.status}; {reply.events} event(s), "
                      f"{reply.observations} observation(s)" + (f" ({ids})" if ids else "")
                      + (f"; error: {inline(reply.error, 300)}" if reply.error else "") + ".")
        return reply

    # -- observation_search / observation_context --------------------------------------------
    def _lexical(self, req: search_pb2.ObservationSearchRequest, limit: int) -> store_pb2.StoreSearchResponse:
        query = _bounded(req.query, "query", SEARCH_QUERY_MAX_CHARS)
        if not query.strip():
            raise InvalidArgument("query", "required: the words to find")
        filters = common_pb2.Filters(
            project=_project(req.project_id) if req.project_id.strip() else "",
            platform_source=_bounded(req.platform_source, "platformSource", PLATFORM_MAX_CHARS),
            kinds=[common_pb2.DOC_KIND_OBSERVATION])
        return self.store.stub.Search(store_pb2.StoreSearchRequest(
            query=query, syntax=store_pb2.QUERY_SYNTAX_PLAIN, filters=filters,
            page=common_pb2.Page(limit=limit), skip_fusion_inputs=True))

    def search(self, req: search_pb2.ObservationSearchRequest) -> search_pb2.ObservationSearchReply:
        limit = check_limit(req.limit, default=OBSERVATION_SEARCH_LIMIT_DEFAULT, maximum=OBSERVATION_SEARCH_LIMIT_MAX)
        found = self._lexical(req, limit)
        rows = list(found.hits)
        if not rows:
            text = f"No observations match {inline(req.query, 200)!r}."
        else:
            text = "\n".join([f"Found {found.observation_total} observation(s) matching {inline(req.query, 200)!r} "
                              f"(full text); showing {len(rows)}.", "",
                              *self.renderer.index_table(rows, show_project=not req.project_id)])
        return search_pb2.ObservationSearchReply(text=text, rows=rows, total=found.observation_total)

    def context(self, req: search_pb2.ObservationSearchRequest) -> search_pb2.ObservationContextReply:
        limit = check_limit(req.limit, default=OBSERVATION_CONTEXT_LIMIT_DEFAULT,
                            maximum=OBSERVATION_CONTEXT_LIMIT_MAX)
        hits = list(self._lexical(req, limit).hits)
        ids = [h.ref.id for h in hits]
        if not ids:
            return search_pb2.ObservationContextReply(text=f"No observations relevant to {inline(req.query, 200)!r}.")
        refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in ids]
        records = self.store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=refs)).records
        by_id = {r.observation.id: r.observation for r in records if r.WhichOneof("record") == "observation"}
        lines = [EVIDENCE_NOTICE, "", f"{len(by_id)} observation(s) relevant to {inline(req.query, 200)!r}, "
                 "best first:", ""]
        for oid in ids:
            if oid in by_id:
                lines += self.renderer.compact_observation(by_id[oid]) + [""]
        return search_pb2.ObservationContextReply(text="\n".join(lines).rstrip() + "\n",
                                                  observation_ids=[i for i in ids if i in by_id])


def _compile(event: common_pb2.ToolUse, payload: Any) -> list[Any]:
    """The hooks' deterministic rules over one event: a payload shaped like a tool use
    (tool_name, tool_input, tool_response) compiles as that tool; anything else as a tool
    named after the event, whose input is the payload."""
    from capture.drafts import ToolEvent
    from capture.observer import observe

    if isinstance(payload, dict) and isinstance(payload.get("tool_name"), str):
        tool = ToolEvent(payload["tool_name"], payload.get("tool_input"), payload.get("tool_response"),
                         str(payload.get("cwd", "")), str(payload.get("hook_event_name") or "PostToolUse"))
    else:
        tool = ToolEvent(event.tool_name, payload, None, event.cwd)
    return observe(tool)
