"""Timelines (layer 2), full observations (layer 3) and timeline context for mem_search.

Details sits on top of Retrieval (its backend, renderer and hybrid search, which anchors
a timeline on a query); Retrieval knows nothing of it. No grpc import.
"""

from __future__ import annotations

from mnemo.errors import InvalidArgument, NotFound
from mnemo.timefmt import parse_instant
from mnemo.v1 import common_pb2, search_pb2, store_pb2
from mnemo.vocab import OBSERVATION_IDS_MAX, TIMELINE_DEPTH_DEFAULT, TIMELINE_DEPTH_MAX, parse_display_id
from search_svc.render import EMPTY_HINT, display_id, inline, quoted
from search_svc.requests import check_query, optional_bounded, parse_order
from search_svc.retrieval import Retrieval

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DETAIL_ORDERS = {"date_desc": common_pb2.ORDER_DATE_DESC, "date_asc": common_pb2.ORDER_DATE_ASC}


def parse_anchor(text: str) -> common_pb2.Ref | int:
    """A record reference ("123", "#123", "S12", "#S12", "P7") or an ISO time as epoch ms."""
    record = parse_display_id(text.strip(" "))  # spaces only: "#12\n" is no record reference
    if record:
        return common_pb2.Ref(kind=record[0], id=record[1])  # type: ignore[arg-type]
    try:
        instant = parse_instant(text, "anchor")
    except InvalidArgument:
        instant = None
    # A digit string too long for an id reads as epoch milliseconds; past int64 it fits no request.
    if instant is None or not _INT64_MIN <= instant <= _INT64_MAX:
        raise InvalidArgument("anchor", "expected an observation id (123 or #123), a summary (S12), "
                              f"a prompt (P7) or an ISO-8601 timestamp within the 64-bit range, got {text[:40]!r}")
    return instant


def depth(req: search_pb2.TimelineRequest, name: str) -> int:
    return optional_bounded(req, name, default=TIMELINE_DEPTH_DEFAULT, maximum=TIMELINE_DEPTH_MAX)


def timeline_request(anchor: common_pb2.Ref | int, before: int, after: int,
                     filters: common_pb2.Filters) -> store_pb2.StoreTimelineRequest:
    """The store's timeline around a record (a Ref) or an instant (epoch ms)."""
    request = store_pb2.StoreTimelineRequest(depth_before=before, depth_after=after, filters=filters)
    if isinstance(anchor, int):
        request.epoch = anchor
    else:
        request.ref.CopyFrom(anchor)
    return request


class Details:
    """timeline, get_observations and mem_search's timeline context, over a Retrieval."""

    def __init__(self, retrieval: Retrieval):
        self.retrieval = retrieval
        self.store = retrieval.backend.store
        self.render = retrieval.render

    def _store_timeline(self, anchor: common_pb2.Ref | int, before: int, after: int,
                        filters: common_pb2.Filters) -> store_pb2.StoreTimelineResponse:
        return self.store.stub.Timeline(timeline_request(anchor, before, after, filters))

    def timeline(self, req: search_pb2.TimelineRequest) -> search_pb2.TimelineReply:
        anchor_text, query = req.anchor.strip(), req.query.strip()
        if bool(anchor_text) == bool(query):
            raise InvalidArgument("anchor", "give exactly one of anchor (an id or timestamp) and query")
        before, after = depth(req, "depth_before"), depth(req, "depth_after")
        filters = common_pb2.Filters(project=req.project.strip())
        anchor: common_pb2.Ref | int
        if query:
            check_query(query)
            best = self.retrieval.hybrid(query, filters, limit=1).rows
            if not best:
                return search_pb2.TimelineReply(
                    text=f"No results found matching {quoted(query)}; nothing to anchor a timeline on. "
                         f"{EMPTY_HINT}", anchor_index=-1)
            anchor = best[0].ref
            title = (f"Timeline for query {quoted(query)}: anchor {best[0].display_id} "
                     f"{inline(best[0].title, 120)}")
        else:
            anchor = parse_anchor(anchor_text)
            title = f"Timeline around {_anchor_label(anchor, anchor_text)}"
        reply = self._store_timeline(anchor, before, after, filters)
        rows = list(reply.rows)
        text = self.render.timeline(title, rows, reply.anchor_index, before=before, after=after,
                                    show_project=not filters.project)
        return search_pb2.TimelineReply(text=text, items=rows, anchor_index=reply.anchor_index,
                                        anchor=_anchor_label(anchor, anchor_text))

    def context_rows(self, ref: common_pb2.Ref, before: int, after: int,
                     project: str) -> list[common_pb2.IndexRow]:
        """Up to `before` and `after` neighbours of a record in time order, the record itself excluded."""
        before, after = max(0, min(before, TIMELINE_DEPTH_MAX)), max(0, min(after, TIMELINE_DEPTH_MAX))
        if before == 0 and after == 0:
            return []
        try:
            reply = self._store_timeline(ref, before, after, common_pb2.Filters(project=project))
        except NotFound:
            return []
        rows = list(reply.rows)
        position = next((i for i, row in enumerate(rows) if row.ref == ref), -1)
        if position < 0:
            return []
        return rows[max(0, position - before):position] + rows[position + 1:position + 1 + after]

    def get_observations(self, req: search_pb2.GetObservationsRequest) -> search_pb2.GetObservationsReply:
        ids = _observation_ids(req)
        order = parse_order(req.order_by, _DETAIL_ORDERS)
        refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in ids]
        records = self.store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=refs, project=req.project.strip()))
        found = [r.observation for r in records.records if r.WhichOneof("record") == "observation"]
        found.sort(key=lambda o: (o.created_at_epoch, o.id), reverse=order == common_pb2.ORDER_DATE_DESC)
        if req.limit:
            found = found[:req.limit]
        returned_or_cut = {r.observation.id for r in records.records}
        wrong = [ref.id for ref in records.marked_wrong]
        missing = [i for i in ids if i not in returned_or_cut and i not in wrong]
        text = self.render.observations(found, missing, wrong)
        return search_pb2.GetObservationsReply(text=text, observations=found)


def _anchor_label(anchor: common_pb2.Ref | int, anchor_text: str) -> str:
    return display_id(anchor) if isinstance(anchor, common_pb2.Ref) else inline(anchor_text, 40)


def _observation_ids(req: search_pb2.GetObservationsRequest) -> list[int]:
    """The asked ids, deduplicated in order; the bounds of get_observations checked."""
    ids = list(dict.fromkeys(req.ids))
    if not 1 <= len(ids) <= OBSERVATION_IDS_MAX:
        raise InvalidArgument("ids", f"give between 1 and {OBSERVATION_IDS_MAX} observation ids (got {len(ids)})")
    bad = [i for i in ids if i <= 0]
    if bad:
        raise InvalidArgument("ids", f"ids are positive integers (got {bad[0]})")
    if req.limit < 0:
        raise InvalidArgument("limit", f"must be 0 (all asked) or more (got {req.limit})")
    return ids
