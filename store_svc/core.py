"""The store's logic, one method per RPC, without gRPC (protobuf messages in and out).

Every write runs in one write transaction of the backend (SQLite: BEGIN IMMEDIATE behind
one writer; PostgreSQL: a transaction-scoped advisory lock), so a failed request leaves
nothing behind and writers are serialized. Every read RPC runs in one read transaction, so
counts and pages of one request see the same snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from mnemo.config import Settings
from mnemo.errors import InvalidArgument, NotFound
from mnemo.extras import require
from mnemo.logs import get_logger
from mnemo.query import MAX_QUERY_CHARS, ParsedQuery, parse
from mnemo.timefmt import iso_from_ms, now_ms
from mnemo.v1 import common_pb2, store_pb2
from mnemo.vocab import DEFAULT_PLATFORM, KIND_NAMES, TITLE_MAX_CHARS, display_id
from store_svc import convert, observations, queries, schema, sessions, state, transfer, validate, writes
from store_svc.backend import SqliteBackend
from store_svc.dialect import Backend, Conn, Row
from store_svc.evidence import evidence
from store_svc.validate import check_page, check_refs
from store_svc.writes import clean

log = get_logger(__name__)

MAX_BATCH = 1000


def _valid_text(text: str) -> str:
    """Lone surrogates (possible only in-process) become U+FFFD so SQLite can bind the text."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def check_filters(filters: common_pb2.Filters, field: str = "filters") -> common_pb2.Filters:
    """Validate filters and return a normalized copy.

    A DOC_KIND_UNSPECIFIED in kinds means every kind. File fragments are literal text of
    any content (they are LIKE parameters, escaped), cut at 10,000 characters like queries.
    """
    validate.project(f"{field}.project", filters.project, needed=False)
    validate.identifier(f"{field}.platform_source", filters.platform_source, needed=False)
    for name in ("obs_types", "concepts"):
        values = getattr(filters, name)
        validate.count(f"{field}.{name}", values, 50, needed=False)
        for i, value in enumerate(values):
            validate.required(f"{field}.{name}[{i}]", value)
            validate.max_chars(f"{field}.{name}[{i}]", value, 1024)
    validate.count(f"{field}.files", filters.files, 50, needed=False)
    for kind in filters.kinds:
        if kind not in KIND_NAMES and kind != common_pb2.DOC_KIND_UNSPECIFIED:
            raise InvalidArgument(f"{field}.kinds", f"unknown kind {kind}")
    validate.non_negative(f"{field}.date_start_epoch", filters.date_start_epoch)
    validate.non_negative(f"{field}.date_end_epoch", filters.date_end_epoch)
    if filters.date_start_epoch and filters.date_end_epoch and filters.date_start_epoch > filters.date_end_epoch:
        raise InvalidArgument(f"{field}.date_end_epoch", "must not be before date_start_epoch")
    normalized = common_pb2.Filters()
    normalized.CopyFrom(filters)
    if common_pb2.DOC_KIND_UNSPECIFIED in filters.kinds:
        del normalized.kinds[:]
    del normalized.files[:]
    normalized.files.extend(_valid_text(f[:MAX_QUERY_CHARS]) for f in filters.files)
    return normalized


class Store:
    """The system of record over a backend: one SQLite file (store_svc.backend) or a
    PostgreSQL database shared by replicas (store_svc.pg.backend)."""

    def __init__(self, path: Path | str | None = None, *, backend: Backend | None = None,
                 tool_uses_cap_bytes: int = 16384, cursor_ttl_s: int = 1800):
        if backend is None:
            if path is None:
                raise InvalidArgument("db_path", "a SQLite path or a backend is required")
            backend = SqliteBackend(path)
        self.backend = backend
        self.path = getattr(backend, "path", None)
        self.tool_uses_cap_bytes = tool_uses_cap_bytes
        self.cursor_ttl_s = cursor_ttl_s
        self.schema_version: int = backend.schema_version

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        backend: Backend
        if settings.store_backend == "postgres":
            # psycopg is imported only when it is used: the server extra installs it
            for module in ("psycopg", "psycopg_pool"):
                require(module, "server", "the PostgreSQL store backend (store_backend = postgres)")
            from store_svc.pg.backend import PgBackend

            if not settings.store_dsn:
                raise InvalidArgument("store_dsn", "required when store_backend is postgres")
            backend = PgBackend(settings.store_dsn, pool_size=settings.store_pool_size)
        elif settings.store_backend == "sqlite":
            backend = SqliteBackend(settings.database)
        else:
            raise InvalidArgument("store_backend", f"must be sqlite or postgres, not {settings.store_backend[:40]!r}")
        return cls(backend=backend, tool_uses_cap_bytes=settings.tool_uses_cap_bytes,
                   cursor_ttl_s=settings.cursor_ttl_s)

    def close(self, drain_s: float = 5.0) -> None:
        self.backend.close(drain_s)

    def writing(self) -> AbstractContextManager[Conn]:
        """One write transaction: committed when the block succeeds, rolled back otherwise."""
        return self.backend.writing()

    def reading(self) -> AbstractContextManager[Conn]:
        """A consistent snapshot for the duration of one read RPC."""
        return self.backend.reading()

    # -- sessions and prompts --------------------------------------------------------------
    def upsert_session(self, request: store_pb2.UpsertSessionRequest) -> common_pb2.Session:
        writes.clean_keys(request, "content_session_id", "memory_session_id", "project", "external_id")
        validate.identifier("content_session_id", request.content_session_id)
        validate.project("project", request.project, needed=False)
        platform = validate.identifier("platform_source", request.platform_source, needed=False) or DEFAULT_PLATFORM
        validate.identifier("memory_session_id", request.memory_session_id, needed=False)
        validate.max_chars("custom_title", request.custom_title, TITLE_MAX_CHARS)
        validate.identifier("external_id", request.external_id, needed=False)
        validate.non_negative("started_at_epoch", request.started_at_epoch)
        prompt = writes.cap_text(clean(request.user_prompt[: validate.MAX_PROMPT_CHARS * 4]), validate.MAX_PROMPT_CHARS)
        with self.writing() as conn:
            # Looked up among the caller's projects' sessions: another project's is not seen.
            row = sessions.by_content(conn, request.content_session_id, platform, clean(request.project))
            if row is None:
                validate.project("project", request.project)
                sessions.check_external_id_free(conn, request.external_id, None, clean(request.project))
                row = sessions.create(
                    conn,
                    content_session_id=request.content_session_id,
                    project=clean(request.project),
                    platform=platform,
                    memory_session_id=request.memory_session_id,
                    user_prompt=prompt,
                    custom_title=clean(request.custom_title),
                    started_at_epoch=request.started_at_epoch,
                    external_id=request.external_id,
                )
            else:
                row = self._update_session(conn, row, request, prompt)
            return convert.session_pb(row)

    @staticmethod
    def _update_session(conn: Conn, row: Row, request: store_pb2.UpsertSessionRequest,
                        prompt: str) -> Row:
        changes: dict[str, object] = {}
        project = clean(request.project) or row["project"]
        if project != row["project"]:
            changes["project"] = project
        memory = request.memory_session_id or row["memory_session_id"]
        if memory != row["memory_session_id"]:
            sessions.check_not_reserved("memory_session_id", memory, project)
            changes["memory_session_id"] = memory
        if changes:  # its ids must stay unique in the project it is in afterwards
            sessions.check_memory_session_free(conn, memory, row["id"], project)
        external = row["external_id"] or request.external_id
        if external != row["external_id"] or "project" in changes:
            sessions.check_external_id_free(conn, external, row["id"], project)
            if external != row["external_id"]:
                changes["external_id"] = external
        if prompt and not row["user_prompt"]:
            changes["user_prompt"] = prompt
        if request.custom_title:
            changes["custom_title"] = clean(request.custom_title)
        if changes:
            assignments = ", ".join(f"{column} = ?" for column in changes)
            conn.execute(f"UPDATE sdk_sessions SET {assignments} WHERE id = ?", (*changes.values(), row["id"]))
        return sessions.by_id(conn, row["id"])

    def complete_session(self, request: store_pb2.CompleteSessionRequest) -> common_pb2.Session:
        writes.clean_keys(request, "content_session_id")
        validate.identifier("content_session_id", request.content_session_id)
        platform = validate.identifier("platform_source", request.platform_source, needed=False) or DEFAULT_PLATFORM
        status = validate.one_of("status", request.status or "completed", validate.SESSION_END_STATES)
        epoch = now_ms()
        with self.writing() as conn:
            # Another project's session is not seen: answered exactly like one that does not exist.
            row = sessions.by_content(conn, request.content_session_id, platform,
                                      remedy=("content_session_id", "complete it with a token of that project"))
            row = writes.require_row(row, f"session {request.content_session_id[:64]!r} on {platform}")
            conn.execute(
                "UPDATE sdk_sessions SET status = ?, completed_at = ?, completed_at_epoch = ? WHERE id = ?",
                (status, iso_from_ms(epoch), epoch, row["id"]),
            )
            return convert.session_pb(sessions.by_id(conn, row["id"]))

    def record_prompt(self, request: store_pb2.RecordPromptRequest) -> store_pb2.RecordPromptResponse:
        writes.clean_keys(request, "content_session_id", "project", "external_id")
        prepared = writes.prepare_prompt(
            request.content_session_id,
            request.platform_source,
            request.project,
            request.prompt_text,
            request.created_at_epoch,
            request.external_id,
            request.prompt_number,
        )
        with self.writing() as conn:
            row, reason = writes.insert_prompt(conn, prepared)
        reply = store_pb2.RecordPromptResponse(skipped=bool(reason), reason=reason)
        if row is not None:
            reply.prompt.CopyFrom(convert.prompt_pb(row))
        return reply

    # -- observations, summaries, tool uses ------------------------------------------------
    def add_observations(self, request: store_pb2.AddObservationsRequest) -> store_pb2.AddObservationsResponse:
        validate.count("observations", request.observations, MAX_BATCH)
        for obs in request.observations:
            writes.clean_keys(obs, "memory_session_id", "external_id")
        prepared = [observations.prepare_observation(o, f"observations[{i}]")
                    for i, o in enumerate(request.observations)]
        with self.writing() as conn:
            ids, created = observations.insert_observations(conn, prepared)
        return store_pb2.AddObservationsResponse(ids=ids, created=created)

    def add_summaries(self, request: store_pb2.AddSummariesRequest) -> store_pb2.AddSummariesResponse:
        validate.count("summaries", request.summaries, MAX_BATCH)
        for summary in request.summaries:
            writes.clean_keys(summary, "memory_session_id", "project", "external_id")
        prepared = [writes.prepare_summary(s, f"summaries[{i}]") for i, s in enumerate(request.summaries)]
        reply = store_pb2.AddSummariesResponse()
        with self.writing() as conn:
            for values in prepared:
                row_id, created = writes.insert_summary(conn, values)
                reply.ids.append(row_id)
                reply.created.append(created)
        return reply

    def record_tool_use(self, request: store_pb2.RecordToolUseRequest) -> common_pb2.ToolUse:
        writes.clean_keys(request.tool_use, "content_session_id", "memory_session_id", "project", "tool_use_id",
                          "tool_name", "cwd")
        with self.writing() as conn:
            row_id, _ = writes.insert_tool_use(conn, request.tool_use, self.tool_uses_cap_bytes)
            return writes.tool_use_message(conn, row_id)

    def get_tool_uses(self, request: store_pb2.GetToolUsesRequest) -> store_pb2.GetToolUsesResponse:
        limit = validate.bounded("limit", request.limit, 20, 100, minimum=1)
        writes.clean_keys(request, "content_session_id", "project")  # keys are stored filtered
        for name in ("ids", "tool_use_ids", "observation_ids"):
            validate.count(name, getattr(request, name), 500, needed=False)
        validate.project("project", request.project, needed=False)
        selectors: list[str] = []
        params: list[int | str] = []
        if request.ids:
            selectors.append(f"t.id IN ({', '.join('?' for _ in request.ids)})")
            params.extend(request.ids)
        if request.tool_use_ids:
            selectors.append(f"t.tool_use_id IN ({', '.join('?' for _ in request.tool_use_ids)})")
            params.extend(request.tool_use_ids)
        if request.observation_ids:
            selectors.append(
                "t.id IN (SELECT tool_use_id FROM observation_tool_uses WHERE observation_id IN "
                f"({', '.join('?' for _ in request.observation_ids)}))"
            )
            params.extend(request.observation_ids)
        where = [f"({' OR '.join(selectors)})"] if selectors else []
        if request.project:
            where.append("ss.project = ?")
            params.append(request.project)
        if request.content_session_id:
            where.append("t.content_session_id = ?")
            params.append(request.content_session_id)
        sql = (f"{writes.TOOL_USE_SELECT} WHERE {' AND '.join(where) or 'TRUE'} "
               "ORDER BY t.created_at_epoch, t.id LIMIT ?")
        with self.reading() as conn:
            rows = conn.execute(sql, [*params, limit]).fetchall()
            links = queries.tool_use_links(conn, "tool_use_id", [r["id"] for r in rows])
            return store_pb2.GetToolUsesResponse(
                tool_uses=[convert.tool_use_pb(r, links.get(r["id"], ())) for r in rows]
            )

    # -- reads -----------------------------------------------------------------------------
    def get_records(self, request: store_pb2.GetRecordsRequest) -> store_pb2.GetRecordsResponse:
        refs = check_refs(request.refs, 200)
        validate.project("project", request.project, needed=False)
        with self.reading() as conn:
            found = queries.records(conn, refs, request.project)
        return store_pb2.GetRecordsResponse(records=[found[r] for r in refs if r in found])

    def hydrate(self, request: store_pb2.HydrateRequest) -> store_pb2.HydrateResponse:
        refs = check_refs(request.refs, 500)
        filters = check_filters(request.filters)
        with self.reading() as conn:
            found = queries.index_rows(conn, refs, filters)
            specific = queries.specificities(conn, found.values())
        return store_pb2.HydrateResponse(rows=[convert.index_row_pb(found[r], specificity=specific[r])
                                               for r in refs if r in found])

    def list_recent(self, request: store_pb2.ListRecentRequest) -> store_pb2.ListRecentResponse:
        filters = check_filters(request.filters)
        limit, offset = check_page(request.page)
        order = request.order if request.order == common_pb2.ORDER_DATE_ASC else common_pb2.ORDER_DATE_DESC
        with self.reading() as conn:
            page = queries.find(conn, filters, None, order, limit, offset)
            rows = self._index_rows(conn, page, ranked=False)
        return store_pb2.ListRecentResponse(rows=rows, total=sum(page.totals.values()))

    def search(self, request: store_pb2.StoreSearchRequest) -> store_pb2.StoreSearchResponse:
        filters = check_filters(request.filters)
        limit, offset = check_page(request.page)
        parsed = parse(request.query, operators=request.syntax == store_pb2.QUERY_SYNTAX_OPERATORS)
        query: ParsedQuery | None = parsed if parsed.text.strip() else None  # no text: a listing under the filters
        if query is not None and query.is_empty and not query.has_exclusions:
            return store_pb2.StoreSearchResponse()  # nothing searchable in the text (only punctuation)
        fused = None if request.skip_fusion_inputs else query  # the query as search_svc's fusion reads it
        with self.reading() as conn:
            page = queries.find(conn, filters, query, request.order, limit, offset)
            hits = self._index_rows(conn, page, ranked=fused is not None)
            if fused is not None:  # how much of the query each hit holds: search_svc's floor reads it
                found = evidence(conn, fused, [(h.ref.kind, h.ref.id) for h in hits], matches=True)
                for hit in hits:
                    hit.evidence = found.get((hit.ref.kind, hit.ref.id), 0.0)
        totals = page.totals
        return store_pb2.StoreSearchResponse(
            hits=hits,
            total=sum(totals.values()),
            observation_total=totals[common_pb2.DOC_KIND_OBSERVATION],
            summary_total=totals[common_pb2.DOC_KIND_SUMMARY],
            prompt_total=totals[common_pb2.DOC_KIND_PROMPT],
        )

    @staticmethod
    def _index_rows(conn: Conn, page: queries.ResultPage, ranked: bool) -> list[common_pb2.IndexRow]:
        """The page's index rows; `ranked` (a query's matches, which search_svc fuses): with their
        specificity, which listings and unfused searches do not need and should not pay for."""
        found = queries.index_rows(conn, [(h.kind, h.id) for h in page.hits])
        specific = queries.specificities(conn, found.values()) if ranked else {}
        return [convert.index_row_pb(found[key], h.score, specific.get(key, 0.0)) for h in page.hits
                if (key := (h.kind, h.id)) in found]

    def timeline(self, request: store_pb2.StoreTimelineRequest) -> store_pb2.StoreTimelineResponse:
        for name in ("depth_before", "depth_after"):
            if not 0 <= getattr(request, name) <= 20:
                raise InvalidArgument(name, "must be between 0 and 20")
        filters = check_filters(request.filters)
        anchor = request.WhichOneof("anchor")
        if anchor is None:
            raise InvalidArgument("anchor", "set ref (an observation or summary) or epoch (ms)")
        with self.reading() as conn:
            if anchor == "ref":
                key = self._anchor_key(conn, request.ref, filters)
            else:
                key = (validate.non_negative("epoch", request.epoch), 0, 0)
            before, after = queries.around(conn, key, filters, request.depth_before, request.depth_after + 1)
            keys = [*reversed(before), *after]
            found = queries.records(conn, [(k, i) for _, k, i in keys])
            index = queries.index_rows(conn, [(k, i) for _, k, i in keys])
        present = [(k, i) for _, k, i in keys if (k, i) in found and (k, i) in index]
        return store_pb2.StoreTimelineResponse(
            items=[found[r] for r in present],
            rows=[convert.index_row_pb(index[r]) for r in present],
            anchor_index=len(before) if after else -1,
        )

    @staticmethod
    def _anchor_key(conn: Conn, ref: common_pb2.Ref, filters: common_pb2.Filters) -> tuple[int, int, int]:
        check_refs([ref], 1)
        key = queries.anchor_key(conn, ref)
        shown = display_id(ref.kind, ref.id)
        if key is None or not queries.index_rows(conn, [(ref.kind, ref.id)], filters):
            raise NotFound(f"anchor {shown} not found (or outside the filters); search for a valid id first")
        return key

    # -- deletes, change feed, stats -----------------------------------------------------
    def delete_records(self, request: store_pb2.DeleteRecordsRequest) -> store_pb2.DeleteRecordsResponse:
        refs = check_refs(request.refs, MAX_BATCH)
        deleted = 0
        with self.writing() as conn:
            for kind, spec in queries.KINDS.items():
                ids = [i for k, i in refs if k == kind]
                if ids:
                    deleted += conn.execute(
                        f"DELETE FROM {spec.table} WHERE id IN ({', '.join('?' for _ in ids)})", ids
                    ).rowcount
        return store_pb2.DeleteRecordsResponse(deleted=deleted)

    def read_changes(self, request: store_pb2.ReadChangesRequest) -> store_pb2.ReadChangesResponse:
        validate.non_negative("after_seq", request.after_seq)
        limit = validate.bounded("limit", request.limit, 500, 5000, minimum=1)
        with self.reading() as conn:
            rows = conn.execute(
                "SELECT seq, kind, record_id, op FROM change_feed WHERE seq > ? ORDER BY seq LIMIT ?",
                (request.after_seq, limit),
            ).fetchall()
            wanted = {(r["kind"], r["record_id"]) for r in rows if r["op"] == schema.OP_UPSERT}
            found = queries.records(conn, wanted)
            head = conn.execute("SELECT coalesce(max(seq), 0) FROM change_feed").fetchone()[0]
        reply = store_pb2.ReadChangesResponse(head_seq=head)
        for row in rows:
            change = reply.changes.add(
                seq=row["seq"], ref=common_pb2.Ref(kind=row["kind"], id=row["record_id"]), op=row["op"]
            )
            record = found.get((row["kind"], row["record_id"])) if row["op"] == schema.OP_UPSERT else None
            if record is not None:
                change.record.CopyFrom(record)
        return reply

    def stats(self, request: store_pb2.StatsRequest) -> store_pb2.StatsResponse:
        validate.project("project", request.project, needed=False)
        scope, params = ("WHERE project = ?", [request.project]) if request.project else ("", [])
        joined = "WHERE session_db_id IN (SELECT id FROM sdk_sessions WHERE project = ?)" if request.project else ""
        with self.reading() as conn:

            def count(sql: str) -> int:
                return conn.execute(sql, params).fetchone()[0]

            reply = store_pb2.StatsResponse(
                sessions=count(f"SELECT count(*) FROM sdk_sessions {scope}"),
                prompts=count(f"SELECT count(*) FROM user_prompts {joined}"),
                observations=count(f"SELECT count(*) FROM observations {scope}"),
                summaries=count(f"SELECT count(*) FROM session_summaries {scope}"),
                tool_uses=count(f"SELECT count(*) FROM tool_uses {joined}"),
                schema_version=conn.execute("SELECT max(version) FROM schema_version").fetchone()[0],
                head_seq=conn.execute("SELECT coalesce(max(seq), 0) FROM change_feed").fetchone()[0],
            )
            reply.db_bytes = self.backend.size_bytes(conn)
        return reply

    # -- cursors, work state, corpora ------------------------------------------------------
    def save_cursor(self, request: store_pb2.Cursor) -> store_pb2.Cursor:
        with self.writing() as conn:
            return state.save_cursor(conn, request, self.cursor_ttl_s)

    def load_cursor(self, request: store_pb2.LoadCursorRequest) -> store_pb2.Cursor:
        with self.reading() as conn:
            return state.load_cursor(conn, request)

    def purge_cursors(self, request: store_pb2.PurgeCursorsRequest) -> store_pb2.PurgeCursorsResponse:
        with self.writing() as conn:
            return store_pb2.PurgeCursorsResponse(purged=state.purge_cursors(conn, request.now_epoch))

    def write_work_state(self, request: store_pb2.WriteWorkStateRequest) -> store_pb2.WorkState:
        with self.writing() as conn:
            return state.write_work_state(conn, request)

    def read_work_state(self, request: store_pb2.ReadWorkStateRequest) -> store_pb2.ReadWorkStateResponse:
        with self.reading() as conn:
            return state.read_work_state(conn, request)

    def put_corpus(self, request: store_pb2.Corpus) -> store_pb2.Corpus:
        with self.writing() as conn:
            return state.put_corpus(conn, request)

    def get_corpus(self, request: store_pb2.GetCorpusRequest) -> store_pb2.Corpus:
        with self.reading() as conn:
            return state.get_corpus(conn, request.name, request.project)

    def list_corpora(self, request: store_pb2.ListCorporaRequest) -> store_pb2.ListCorporaResponse:
        with self.reading() as conn:
            return state.list_corpora(conn)

    def update_corpus(self, request: store_pb2.UpdateCorpusRequest) -> store_pb2.Corpus:
        with self.writing() as conn:
            return state.update_corpus(conn, request)

    # -- export / import -------------------------------------------------------------------
    def export(self, request: store_pb2.ExportRequest) -> Iterator[store_pb2.ExportItem]:
        validate.project("project", request.project, needed=False)
        with self.backend.snapshot() as conn:  # its own snapshot for the whole stream
            yield from transfer.export_items(conn, request.project)

    def import_items(self, request: store_pb2.ImportRequest) -> store_pb2.ImportResponse:
        validate.count("items", request.items, MAX_BATCH)
        with self.writing() as conn:
            return transfer.import_items(conn, request.items, self.tool_uses_cap_bytes)
