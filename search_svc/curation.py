"""Seeing and curating the memory: one record with its surroundings, the stack at a glance,
edits, and forgetting (the viewer and the `mnemo` terminal commands use these).

No grpc import: the store and vector clients raise MnemoError subclasses.
"""

from __future__ import annotations

from collections.abc import Sequence

from mnemo import identity
from mnemo.errors import InvalidArgument, MnemoError, NotFound
from mnemo.logs import get_logger
from mnemo.v1 import common_pb2, search_pb2, store_pb2, vector_pb2
from search_svc.backend import Backend
from search_svc.details import timeline_request
from search_svc.memsearch.params import parse_record_id
from search_svc.render import display_id

log = get_logger(__name__)

MAX_FORGET_IDS = 1000
CONTEXT_DEPTH = 2
# Deleting should show at once in hybrid search; a slow embedder must not hold the reply long.
VECTOR_SYNC_TIMEOUT_S = 5.0


def _kind_of(record: common_pb2.Record) -> str:
    return record.WhichOneof("record") or ""


def _project_of(record: common_pb2.Record) -> str:
    kind = _kind_of(record)
    return getattr(record, kind).project if kind else ""


def _refs(ids: Sequence[str]) -> list[common_pb2.Ref]:
    """The records a forget or mark_wrong request names (InvalidArgument on a bad id or too many)."""
    if len(ids) > MAX_FORGET_IDS:
        raise InvalidArgument("ids", f"at most {MAX_FORGET_IDS:,} items per request")
    return [parse_record_id(raw, f"ids[{i}]")[1] for i, raw in enumerate(ids)]


class Curation:
    def __init__(self, backend: Backend):
        self.backend = backend

    # -- reading -----------------------------------------------------------------------------
    def record_detail(self, request: search_pb2.RecordDetailRequest) -> search_pb2.RecordDetailReply:
        _, ref = parse_record_id(request.id, "id")
        return self._detail(ref)

    def _detail(self, ref: common_pb2.Ref) -> search_pb2.RecordDetailReply:
        store = self.backend.store.stub
        # The owner's own view: a record marked wrong is shown, with its mark and an undo.
        found = store.GetRecords(store_pb2.GetRecordsRequest(refs=[ref], include_marked_wrong=True)).records
        if not found:
            raise NotFound(f"record {display_id(ref)} not found; search first to find valid ids")
        record = found[0]
        reply = search_pb2.RecordDetailReply(record=record)
        rows = store.Hydrate(store_pb2.HydrateRequest(
            refs=[ref], filters=common_pb2.Filters(include_marked_wrong=True))).rows
        if rows:
            reply.row.CopyFrom(rows[0])
        reply.context.extend(self._context(ref, record))
        if ref.kind == common_pb2.DOC_KIND_OBSERVATION:
            uses = store.GetToolUses(store_pb2.GetToolUsesRequest(observation_ids=[ref.id], limit=100))
            reply.tool_uses.extend(uses.tool_uses)
            reply.corpora.extend(self._corpora_holding(ref.id))
        project = _project_of(record)
        if project:
            state = store.ReadWorkState(store_pb2.ReadWorkStateRequest(project=project))
            if state.HasField("current"):
                reply.work_state.CopyFrom(state.current)
        return reply

    def _context(self, ref: common_pb2.Ref, record: common_pb2.Record) -> list[common_pb2.IndexRow]:
        # prompts are not anchors: anchor on their time
        anchor = record.prompt.created_at_epoch if ref.kind == common_pb2.DOC_KIND_PROMPT else ref
        filters = common_pb2.Filters(project=_project_of(record), include_marked_wrong=True)
        rows = self.backend.store.stub.Timeline(timeline_request(anchor, CONTEXT_DEPTH, CONTEXT_DEPTH, filters)).rows
        return [row for row in rows if (row.ref.kind, row.ref.id) != (ref.kind, ref.id)]

    def _corpora_holding(self, observation_id: int) -> list[str]:
        store = self.backend.store.stub
        corpora = store.ListCorpora(store_pb2.ListCorporaRequest()).corpora
        return [c.name for c in corpora if observation_id in store.GetCorpus(
            store_pb2.GetCorpusRequest(name=c.name, project=c.filter.project)).observation_ids]

    def overview(self, request: search_pb2.OverviewRequest) -> search_pb2.OverviewReply:
        store = self.backend.store.stub
        reply = search_pb2.OverviewReply(
            stats=store.Stats(store_pb2.StatsRequest(project=request.project)),
            activity=store.Activity(store_pb2.ActivityRequest(project=request.project, days=request.days)),
        )
        if identity.restricted_projects() is not None:
            return reply  # the index's counts cover every project: not for a token confined to some
        try:
            reply.vector.CopyFrom(self.backend.vector.stub.Status(vector_pb2.VectorStatusRequest(), timeout=2.0))
        except MnemoError as err:
            reply.notice = f"vector_svc unavailable ({err.code}); search is lexical only"
        return reply

    # -- curating ----------------------------------------------------------------------------
    def edit(self, request: store_pb2.EditObservationRequest) -> search_pb2.RecordDetailReply:
        observation = self.backend.store.stub.EditObservation(request)
        return self._detail(common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=observation.id))

    def forget(self, request: search_pb2.ForgetToolRequest) -> search_pb2.ForgetReply:
        refs = _refs(request.ids)
        deleted = self.backend.store.stub.Forget(
            store_pb2.ForgetRequest(refs=refs, sessions=request.sessions, project=request.project))
        reply = search_pb2.ForgetReply(deleted=deleted, vectors_synced=self._sync_vectors())
        reply.text = forget_text(deleted, reply.vectors_synced)
        return reply

    def mark_wrong(self, request: search_pb2.MarkWrongToolRequest) -> search_pb2.MarkWrongReply:
        refs = _refs(request.ids)
        changed = self.backend.store.stub.MarkWrong(
            store_pb2.MarkWrongRequest(refs=refs, undo=request.undo, reason=request.reason)).changed
        shown = ", ".join(display_id(ref) for ref in changed) or "nothing"
        if request.undo:
            text = f"Unmarked {shown}: returned by search and fetches again."
        else:
            text = f"Marked {shown} wrong: no search or fetch returns it until undone."
        return search_pb2.MarkWrongReply(text=text, changed=changed)

    def _sync_vectors(self) -> bool:
        """Let vector_svc apply the deletions now rather than on its next poll (best effort)."""
        try:
            self.backend.vector.stub.Sync(vector_pb2.VectorSyncRequest(), timeout=VECTOR_SYNC_TIMEOUT_S)
        except MnemoError as err:
            log.info("forget_vector_sync_deferred", reason=err.code)
            return False
        return True


def forget_text(deleted: store_pb2.ForgetResponse, synced: bool) -> str:
    parts = [f"{count} {one if count == 1 else many}" for one, many, count in (
        ("observation", "observations", deleted.observations), ("summary", "summaries", deleted.summaries),
        ("prompt", "prompts", deleted.prompts), ("session", "sessions", deleted.sessions),
        ("tool use", "tool uses", deleted.tool_uses), ("corpus changed", "corpora changed", deleted.corpora))
        if count]
    tail = "" if synced else " The vector index will drop them when vector_svc is back."
    return f"Forgot {', '.join(parts) or 'nothing'}.{tail}"
