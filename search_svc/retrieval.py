"""Hybrid search: the core behind `search`, and the retrieval every other tool builds on.

Retrieval.search answers `search`; Retrieval.hybrid is the engine every other core
uses (search_svc.details for timeline anchors, memsearch, corpus). Timelines and details
live in search_svc.details, on top of this class.

How hybrid() works (docs/search.md has the long form):
- Empty query: a filter-only listing (StoreService.ListRecent), strategy "filter", exact counts.
- Lexical candidates: StoreService.Search (bm25 OR of content words, CJK substrings) with every
  filter, the first max(LEXICAL_DEPTH, offset+limit) (at most 500).
- Vector candidates: VectorService.Query with the filters Chroma can apply (all but concepts
  and files), then StoreService.Hydrate with ALL filters, so both lists honour every filter.
- Relevance order: the two lists are fused (search_svc.fusion), one row per record.
  Date order: the union is sorted by date. Rows past the fused window continue with the
  remaining lexical matches.
- Named dates: candidates written on a day, month or year the query names gain a fused bonus
  (search_svc.periods).
- Relevance floor: when one is calibrated for the index's embedding model (fusion.CALIBRATED_FLOORS),
  only the fused candidates above it are rows and counted; a query whose best candidate stays
  under the floor's gate finds nothing ("No results found"), and counts are match counts.
- Counts without a floor (an uncalibrated model): the store's exact lexical totals per kind, plus
  the vector neighbours that passed every filter and are not among the lexical candidates. That
  is exact whenever the lexical matches fit the candidate window; beyond it, a vector neighbour
  might also be a deeper lexical match, so the total can exceed the reachable rows by at most
  the vector extras.
- Vector side down (or unable to take the query): lexical rows, strategy "lexical", and a notice.
  With `vector = "off"` it is never asked: lexical rows, strategy "lexical", no notice.
"""

from __future__ import annotations

import contextvars
from collections.abc import Hashable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from mnemo import identity
from mnemo.config import Settings
from mnemo.errors import DeadlineExceeded, FailedPrecondition, Internal, InvalidArgument, MnemoError, Unavailable
from mnemo.logs import get_logger
from mnemo.query import parse
from mnemo.v1 import common_pb2, search_pb2, store_pb2, vector_pb2
from mnemo.vocab import STORE_PAGE_MAX
from search_svc.backend import Backend
from search_svc.fusion import (
    CALIBRATED_FLOORS,
    DEFAULT_FUSION,
    FusionParams,
    RelevanceFloor,
    above_floor,
)
from search_svc.periods import named_periods
from search_svc.ranking import rank
from search_svc.render import Renderer, ReplyContext
from search_svc.requests import describe_filters, search_args
from search_svc.semantic import Key, Semantic, VectorLeg, VectorProbe, not_yet_embedded, ref_key

log = get_logger(__name__)

LEXICAL_DEPTH = 100
"""Lexical candidates fused with the vector list (at least offset+limit)."""
VECTOR_DEPTH = 100
"""Vector neighbours asked for; 200 (the maximum) when concepts/files are filtered after the query."""
VECTOR_DEPTH_POSTFILTERED = 200
MAX_ALTERNATIVES = 8
"""Alternatives of `a OR b OR ...` embedded one by one (each costs an embedding); the last query
embeds the rest together."""
VECTOR_TIMEOUT_S = 5.0
UNEMBEDDED_EVIDENCE = 0.75
"""Lexical evidence a record the index has not embedded yet needs to be a match without a similarity:
three quarters of what the query names. At 0 (any word) a burst of saves made every record holding
one word of a question a match: LoCoMo questions asked in another conversation's project found
nothing 0.127 of the time until the index caught up (0.5: 0.882, 0.75: 0.933, 1: 0.959;
docs/search.md, "Right after a burst of saves")."""
SEMANTIC_DOWN = "semantic search unavailable; lexical results only"
SEMANTIC_WARMING = "semantic search is warming up after a rest; lexical results only"
SEMANTIC_REFUSED = "semantic search could not take this query; lexical results only"
SEMANTIC_REBUILDING = ("semantic index is being re-embedded for the configured model (`mnemo reindex` waits "
                       "for it); lexical results only")
# Errors that mean "the vector side cannot answer now"; the store still can.
_VECTOR_FAILURES = (Unavailable, DeadlineExceeded, FailedPrecondition, Internal, InvalidArgument)

# A vector query's outcome, as the worker thread hands it back: the reply, or the failure
# that makes the answer lexical.
_VectorReply = tuple[vector_pb2.VectorQueryResponse, "Semantic"] | MnemoError


@dataclass
class HybridResult:
    rows: list[common_pb2.IndexRow]
    counts: search_pb2.SearchCounts
    strategy: str
    notice: str = ""


@dataclass(frozen=True)
class _Ask:
    """One hybrid question, as the store's lexical search is asked it again for later rows."""

    query: str
    filters: common_pb2.Filters
    order: common_pb2.Order
    operators: bool


@dataclass(frozen=True)
class _Window:
    """The rows asked for, and how many lexical candidates were fused to find them."""

    limit: int
    offset: int
    depth: int


class Retrieval:
    def __init__(self, backend: Backend, settings: Settings, *, fusion: FusionParams = DEFAULT_FUSION,
                 floors: Mapping[str, RelevanceFloor] = CALIBRATED_FLOORS):
        self.backend, self.settings, self.fusion, self.floors = backend, settings, fusion, floors
        self.render = Renderer(settings.display_tz)
        self._probe = VectorProbe(backend)
        self._leg = VectorLeg(backend, self._probe)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="vector-query")
        # `vector = "off"`: no vector_svc runs, so it is never asked (full-text search only).
        self._vector_on = settings.vector != "off"

    def capabilities(self) -> list[str]:
        # A vector_svc resting after vector_idle_exit_s still counts: the next call wakes it.
        vector_up = self._vector_on and (self._probe.up() or self.backend.vector_resting())
        return ["search", "vector"] if vector_up else ["search"]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- layer 1: search ----------------------------------------------------------------------
    def search(self, req: search_pb2.SearchRequest) -> search_pb2.SearchReply:
        args = search_args(req)
        result = self.hybrid(args.query, args.filters, limit=args.limit, offset=args.offset,
                             order=args.order, operators=args.operators)
        ctx = ReplyContext(query=args.query, counts=result.counts, offset=args.offset, strategy=result.strategy,
                           notice=result.notice, filters_text=describe_filters(args.filters))
        text = self.render.search(ctx, result.rows, show_project=not args.filters.project)
        return search_pb2.SearchReply(text=text, rows=result.rows, counts=result.counts,
                                      strategy=result.strategy, notice=result.notice)

    # -- hybrid retrieval -----------------------------------------------------------------------
    def hybrid(self, query: str, filters: common_pb2.Filters, *, limit: int, offset: int = 0,
               order: common_pb2.Order = common_pb2.ORDER_RELEVANCE, operators: bool = False) -> HybridResult:
        if limit < 1 or offset < 0:
            raise InvalidArgument("limit" if limit < 1 else "offset", "limit must be 1 or more and offset 0 or more")
        if not query.strip():
            return self._listing(filters, limit, offset, order)
        ask = _Ask(query, filters, order, operators)
        semantic_texts, notice = _semantic_query(query, operators)
        pending = self._start_semantic(semantic_texts, filters) if semantic_texts and self._vector_on else None
        if pending is None:  # nothing to fuse with: the store ranks, pages and counts on its own
            lexical = self._lexical(ask, offset=offset, limit=limit)
            return HybridResult(rows=list(lexical.hits), counts=lexical_counts(lexical), strategy="lexical",
                                notice=notice)
        depth = min(STORE_PAGE_MAX, max(LEXICAL_DEPTH, offset + limit))
        lexical = self._lexical(ask, offset=0, limit=depth, fused=True)
        semantic, vector_notice = self._finish_semantic(pending, filters)
        notice = notice or vector_notice
        if semantic is None:
            return self._lexical_only(lexical, ask, limit, offset, notice)
        return self._fused(lexical, semantic, ask, _Window(limit, offset, depth), notice)

    def _listing(self, filters: common_pb2.Filters, limit: int, offset: int,
                 order: common_pb2.Order) -> HybridResult:
        order = common_pb2.ORDER_DATE_DESC if order == common_pb2.ORDER_RELEVANCE else order
        reply = self.backend.store.stub.ListRecent(store_pb2.ListRecentRequest(
            filters=filters, page=common_pb2.Page(limit=limit, offset=offset), order=order))
        counts = search_pb2.SearchCounts(total=reply.total)
        for kind, attr in ((common_pb2.DOC_KIND_OBSERVATION, "observations"),
                           (common_pb2.DOC_KIND_SUMMARY, "summaries"), (common_pb2.DOC_KIND_PROMPT, "prompts")):
            setattr(counts, attr, self._count_kind(filters, kind))
        return HybridResult(rows=list(reply.rows), counts=counts, strategy="filter")

    def _count_kind(self, filters: common_pb2.Filters, kind: common_pb2.DocKind) -> int:
        if filters.kinds and kind not in filters.kinds:
            return 0
        narrowed = common_pb2.Filters()
        narrowed.CopyFrom(filters)
        narrowed.ClearField("kinds")
        narrowed.kinds.append(kind)
        return self.backend.store.stub.ListRecent(store_pb2.ListRecentRequest(
            filters=narrowed, page=common_pb2.Page(limit=1))).total

    def _lexical(self, ask: _Ask, *, offset: int, limit: int, fused: bool = False) -> store_pb2.StoreSearchResponse:
        """The store's matches; `fused`: with the evidence and specificity fusion reads, which rows
        shown in the store's own order (full-text only, the tail past the fused window) skip."""
        syntax = store_pb2.QUERY_SYNTAX_OPERATORS if ask.operators else store_pb2.QUERY_SYNTAX_PLAIN
        return self.backend.store.stub.Search(store_pb2.StoreSearchRequest(
            query=ask.query, syntax=syntax, filters=ask.filters, order=ask.order,
            page=common_pb2.Page(limit=limit, offset=offset), skip_fusion_inputs=not fused))

    # The vector query runs on a worker thread while the lexical query runs on this one.
    def _start_semantic(self, texts: tuple[str, ...], filters: common_pb2.Filters) -> Future[_VectorReply]:
        limit = VECTOR_DEPTH_POSTFILTERED if (filters.concepts or filters.files) else VECTOR_DEPTH
        requests = [vector_pb2.VectorQueryRequest(text=text, filters=vector_filters(filters), limit=limit)
                    for text in texts]
        timeout = min(self.backend.vector.timeout, VECTOR_TIMEOUT_S)
        context = contextvars.copy_context()  # carries the caller's deadline to the worker thread
        return self._pool.submit(context.run, self._query_vector, requests, timeout, filters)

    def _query_vector(self, requests: list[vector_pb2.VectorQueryRequest], timeout: float,
                      filters: common_pb2.Filters) -> _VectorReply:
        try:
            reply, since = self._leg.neighbours(requests, timeout)
        except _VECTOR_FAILURES as err:
            return err
        # Hydrated here, on the worker: the store round trips overlap the lexical query still running.
        return reply, self._leg.complete(reply, since, filters)

    def _finish_semantic(self, pending: Future[_VectorReply],
                         filters: common_pb2.Filters) -> tuple[Semantic | None, str]:
        """The hydrated neighbours, or None and the notice explaining why there are none."""
        reply = pending.result()
        if isinstance(reply, MnemoError):
            log.warning("vector query failed; answering lexically", code=reply.code, error=reply.message)
            if isinstance(reply, InvalidArgument):
                return None, SEMANTIC_REFUSED
            if isinstance(reply, FailedPrecondition):  # vector_svc's index was built by another model
                return None, SEMANTIC_REBUILDING
            self._probe.record(False)
            if isinstance(reply, Unavailable) and self.backend.wake_vector():
                return None, SEMANTIC_WARMING  # it idled out: asked to start, hybrid again in seconds
            return None, SEMANTIC_DOWN
        self._probe.record(True)
        return reply[1], ""

    def _lexical_only(self, lexical: store_pb2.StoreSearchResponse, ask: _Ask, limit: int, offset: int,
                      notice: str) -> HybridResult:
        rows = list(lexical.hits[offset:offset + limit])
        if len(rows) < limit and offset + limit > len(lexical.hits) and lexical.total > len(lexical.hits):
            rows = list(self._lexical(ask, offset=offset, limit=limit).hits)
        return HybridResult(rows=rows, counts=lexical_counts(lexical), strategy="lexical", notice=notice)

    def _fused(self, lexical: store_pb2.StoreSearchResponse, semantic: Semantic, ask: _Ask, window: _Window,
               notice: str) -> HybridResult:
        floor = self.floors.get(self._probe.model())
        if floor is None:  # no floor calibrated for this model: every candidate counts
            return self._unfloored(lexical, semantic, ask, window, notice)
        # Trigger: a floor is calibrated for the index's model. Why: fused scores are relative and
        # cannot say "nothing matched". Outcome: only matches are ranked, paged and counted.
        matches = self._rank_fusion(lexical, semantic, ask, window.depth, floor)
        if ask.order != common_pb2.ORDER_RELEVANCE:
            newest_first = ask.order == common_pb2.ORDER_DATE_DESC
            matches = sorted(matches, key=lambda m: _date_order(m[0]), reverse=newest_first)  # keys unique
        counts = search_pb2.SearchCounts()
        for row, _ in matches:
            counts.total += 1
            _bump_kind(counts, row.ref.kind)
        rows = _scored(matches[window.offset:window.offset + window.limit])
        return HybridResult(rows=rows, counts=counts, strategy="hybrid", notice=notice)

    def _unfloored(self, lexical: store_pb2.StoreSearchResponse, semantic: Semantic, ask: _Ask, window: _Window,
                   notice: str) -> HybridResult:
        lexical_rows = {ref_key(row.ref): row for row in lexical.hits}
        extras = [row for row in semantic.rows if ref_key(row.ref) not in lexical_rows]
        counts = lexical_counts(lexical)
        for row in extras:
            counts.total += 1
            _bump_kind(counts, row.ref.kind)
        if ask.order == common_pb2.ORDER_RELEVANCE:
            scored = self._rank_fusion(lexical, semantic, ask, window.depth)
            ranked = [row for row, _ in scored]
            rows = _scored(scored[window.offset:window.offset + window.limit])
        else:
            ranked = sort_by_date([*lexical.hits, *extras], newest_first=ask.order == common_pb2.ORDER_DATE_DESC)
            rows = ranked[window.offset:window.offset + window.limit]
        missing = window.limit - len(rows)
        if missing > 0 and lexical.total > len(lexical.hits):
            rows += self._tail(ask, start=len(lexical.hits) + max(0, window.offset - len(ranked)),
                               count=missing, shown={ref_key(r.ref) for r in ranked}, slack=len(extras))
        return HybridResult(rows=rows, counts=counts, strategy="hybrid", notice=notice)

    def _rank_fusion(self, lexical: store_pb2.StoreSearchResponse, semantic: Semantic, ask: _Ask,
                     depth: int, floor: RelevanceFloor | None = None) -> list[tuple[common_pb2.IndexRow, float]]:
        """The fused candidates (the matches under `floor`), best first: each source row (the store's,
        not a copy) with its fused score; _scored copies only the rows a reply shows."""
        lexical_keys = [ref_key(row.ref) for row in lexical.hits]
        vector_keys = [ref_key(row.ref) for row in semantic.rows]
        by_key: dict[Hashable, common_pb2.IndexRow] = dict(zip(vector_keys, semantic.rows, strict=True))
        by_key.update(zip(lexical_keys, lexical.hits, strict=True))  # the store's row carries bm25
        placement = {key: (row.project, row.created_at_epoch) for key, row in by_key.items()}
        evidence: dict[Hashable, float] = {key: row.evidence
                                           for key, row in zip(lexical_keys, lexical.hits, strict=True)}
        fused, timeline = rank(
            [(key, row.score) for key, row in zip(lexical_keys, lexical.hits, strict=True)],
            list(zip(vector_keys, semantic.distances, strict=True)), self.fusion, lexical_depth=depth,
            placement=placement, periods=named_periods(ask.query),
            asking={key for key, row in by_key.items() if row.asks},
            specificity={key: row.specificity for key, row in by_key.items()}, evidence=evidence)
        unjudged = {key for key in not_yet_embedded(lexical, semantic) if evidence[key] >= UNEMBEDDED_EVIDENCE}
        fused = above_floor(fused, floor, unjudged, placement, self.fusion, evidence=evidence, timeline=timeline)
        return [(by_key[item.key], item.score) for item in fused]

    def _tail(self, ask: _Ask, *, start: int, count: int, shown: set[Key], slack: int) -> list[common_pb2.IndexRow]:
        """Rows past the fused window: the next lexical matches, skipping records already shown."""
        hits = self._lexical(ask, offset=start, limit=min(STORE_PAGE_MAX, count + slack)).hits
        return [row for row in hits if ref_key(row.ref) not in shown][:count]


def _semantic_query(query: str, operators: bool) -> tuple[tuple[str, ...], str]:
    """(the texts to embed, a notice): nothing to embed when operators restrict the match; each
    alternative on its own for `a OR b`, so it holds what `a` alone finds by meaning."""
    parsed = parse(query, operators=operators)
    restricted = parsed.restricting_operators
    if restricted:
        return (), (f"{' and '.join(restricted)} operators are applied by lexical search only; "
                    "semantic matches left out")
    alternatives = parsed.alternatives
    if len(alternatives) > MAX_ALTERNATIVES:
        alternatives = (*alternatives[:MAX_ALTERNATIVES - 1], " ".join(alternatives[MAX_ALTERNATIVES - 1:]))
    texts = alternatives or (parsed.semantic_text,)
    return tuple(text for text in (t.strip() for t in texts) if text), ""


def vector_filters(filters: common_pb2.Filters) -> common_pb2.Filters:
    """The filters Chroma can apply; concepts and files are applied by the store's Hydrate."""
    narrowed = common_pb2.Filters()
    narrowed.CopyFrom(filters)
    narrowed.ClearField("concepts")
    narrowed.ClearField("files")
    scope = identity.restricted_projects()
    if not narrowed.project and scope is not None and len(scope) == 1:
        # A token of one project: ask Chroma for its neighbours only, so other projects' hits
        # (dropped by the store's Hydrate anyway) do not crowd them out of the top k.
        narrowed.project = next(iter(scope))
    return narrowed


def lexical_counts(reply: store_pb2.StoreSearchResponse) -> search_pb2.SearchCounts:
    return search_pb2.SearchCounts(total=reply.total, observations=reply.observation_total,
                                   summaries=reply.summary_total, prompts=reply.prompt_total)


def _bump_kind(counts: search_pb2.SearchCounts, kind: int) -> None:
    if kind == common_pb2.DOC_KIND_OBSERVATION:
        counts.observations += 1
    elif kind == common_pb2.DOC_KIND_SUMMARY:
        counts.summaries += 1
    elif kind == common_pb2.DOC_KIND_PROMPT:
        counts.prompts += 1


def _scored(matches: Iterable[tuple[common_pb2.IndexRow, float]]) -> list[common_pb2.IndexRow]:
    """Copies of the rows with their fused scores."""
    rows = []
    for source, score in matches:
        row = common_pb2.IndexRow()
        row.CopyFrom(source)
        row.score = score
        rows.append(row)
    return rows


def sort_by_date(rows: Iterable[common_pb2.IndexRow], *, newest_first: bool) -> list[common_pb2.IndexRow]:
    """Deduplicated by record, in date order with a stable tie-break (kind, then id)."""
    unique: dict[Key, common_pb2.IndexRow] = {}
    for row in rows:
        unique.setdefault(ref_key(row.ref), row)
    ordered = sorted(unique.values(), key=_date_order)
    return ordered[::-1] if newest_first else ordered


def _date_order(row: common_pb2.IndexRow) -> tuple[int, int, int]:
    """Date, then the stable tie-break: kind, then id."""
    return row.created_at_epoch, row.ref.kind, row.ref.id
