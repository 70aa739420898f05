"""store_svc.core.Store over a real SQLite file: every RPC's logic, in process."""

from __future__ import annotations

import sqlite3

import pytest

from mnemo.errors import Aborted, InvalidArgument, NotFound
from mnemo.v1 import common_pb2, store_pb2
from store_svc import schema
from store_svc.core import Store
from tests.conftest import BOTH_BACKENDS

pytestmark = [pytest.mark.unit, BOTH_BACKENDS]

OBS, SUM, PROMPT = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_SUMMARY, common_pb2.DOC_KIND_PROMPT


@pytest.fixture
def store(settings):
    s = Store.from_settings(settings)
    yield s
    s.close()


def obs(title: str, narrative: str = "", **fields) -> common_pb2.Observation:
    fields.setdefault("memory_session_id", "mem-1")
    fields.setdefault("project", "proj")
    fields.setdefault("type", "discovery")
    return common_pb2.Observation(title=title, narrative=narrative, **fields)


def add(store: Store, *observations: common_pb2.Observation) -> list[int]:
    return list(store.add_observations(store_pb2.AddObservationsRequest(observations=observations)).ids)


def search(store: Store, query: str = "", **kwargs) -> store_pb2.StoreSearchResponse:
    return store.search(store_pb2.StoreSearchRequest(query=query, **kwargs))


def ref(kind: int, rid: int) -> common_pb2.Ref:
    return common_pb2.Ref(kind=kind, id=rid)


# -- schema ---------------------------------------------------------------------------------

def test_migrations_from_empty_and_reopen_keep_everything(settings):
    first = Store.from_settings(settings)
    assert first.schema_version == schema.LATEST_VERSION
    ids = add(first, obs("Persistent row survives reopen", "kept"))
    first.close()
    again = Store.from_settings(settings)
    try:
        assert again.schema_version == schema.LATEST_VERSION
        assert search(again, "survives").hits[0].ref.id == ids[0]
        if settings.store_backend == "postgres":
            import psycopg

            with psycopg.connect(settings.store_dsn) as pg:
                versions = [r[0] for r in pg.execute("SELECT version FROM schema_version ORDER BY version")]
            assert versions == [m[0] for m in schema.MIGRATIONS]
            return
        conn = sqlite3.connect(settings.database)
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]
        assert versions == [m[0] for m in schema.MIGRATIONS]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()
    finally:
        again.close()


def test_a_failing_migration_leaves_the_previous_version(settings, monkeypatch):
    if settings.store_backend == "postgres":
        import psycopg

        from store_svc.pg import schema as pg_schema

        with psycopg.connect(settings.store_dsn, autocommit=True) as pg:
            assert pg_schema.migrate(pg) == pg_schema.LATEST_VERSION
            monkeypatch.setattr(pg_schema, "MIGRATIONS",
                                pg_schema.MIGRATIONS + ((99, "broken", "CREATE TABLE x(a int); BOGUS;"),))
            with pytest.raises(psycopg.errors.SyntaxError):
                pg_schema.migrate(pg)
            assert pg.execute("SELECT max(version) FROM schema_version").fetchone()[0] == pg_schema.LATEST_VERSION
            assert pg.execute("SELECT to_regclass('x')").fetchone()[0] is None
        return
    conn = schema.connect(settings.database)
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS + ((99, "broken", "CREATE TABLE x(a); BOGUS;"),))
    with pytest.raises(sqlite3.Error):
        schema.migrate(conn)
    assert schema.current_version(conn) == schema.LATEST_VERSION
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'x'").fetchone()[0] == 0
    conn.close()


# -- sessions and prompts -----------------------------------------------------------------

def test_upsert_session_is_idempotent_and_never_stores_a_private_prompt(store):
    request = store_pb2.UpsertSessionRequest(content_session_id="c1", project="proj",
                                             user_prompt="<PRIVATE>secret plan</PRIVATE>")
    first = store.upsert_session(request)
    second = store.upsert_session(store_pb2.UpsertSessionRequest(content_session_id="c1", custom_title="T"))
    assert first.id == second.id and second.custom_title == "T"
    assert first.user_prompt == "" and first.memory_session_id == "c1" and first.platform_source == "claude"
    done = store.complete_session(store_pb2.CompleteSessionRequest(content_session_id="c1", status="failed"))
    assert done.status == "failed" and done.completed_at_epoch > 0


def test_record_prompt_numbers_prompts_skips_private_and_duplicates(store):
    first = store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="c2", project="proj",
                                                              prompt_text="Fix the login page"))
    private = store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="c2",
                                                                prompt_text="<private>only me</private>"))
    twin = store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="c2",
                                                             prompt_text="Fix the login page"))
    third = store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="c2", prompt_text="Next"))
    assert first.prompt.prompt_number == 1 and first.prompt.project == "proj"
    assert private.skipped and private.reason == "private"
    assert twin.skipped and twin.reason == "duplicate" and twin.prompt.id == first.prompt.id
    assert third.prompt.prompt_number == 3
    session = store.upsert_session(store_pb2.UpsertSessionRequest(content_session_id="c2"))
    assert session.user_prompt == "Fix the login page" and session.prompt_counter == 3


def test_a_private_first_prompt_never_reaches_the_session(store):
    store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="c3", project="p",
                                                      prompt_text="<private>key is hunter2</private>"))
    session = store.upsert_session(store_pb2.UpsertSessionRequest(content_session_id="c3"))
    assert session.user_prompt == ""
    assert search(store, "hunter2").total == 0


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (store_pb2.UpsertSessionRequest(project="p"), "content_session_id: required"),
        (store_pb2.UpsertSessionRequest(content_session_id="new"), "project: required"),
        (store_pb2.UpsertSessionRequest(content_session_id="x", project="p" * 257), "project: at most 256 bytes"),
        (store_pb2.UpsertSessionRequest(content_session_id="x" * 300, project="p"),
         "content_session_id: at most 256 characters"),
    ],
)
def test_upsert_session_validation_names_field_and_rule(store, request_, message):
    with pytest.raises(InvalidArgument) as err:
        store.upsert_session(request_)
    assert str(err.value).startswith(message)


# -- observations -------------------------------------------------------------------------

def test_add_observations_dedupes_by_hash_and_external_id(store):
    a = obs("Cache invalidation fixed", "redis keys now expire", external_id="ext-1")
    b = obs("Second", "other")
    reply = store.add_observations(store_pb2.AddObservationsRequest(observations=[a, b, a]))
    assert reply.created == [True, True, False] and reply.ids[0] == reply.ids[2]
    again = store.add_observations(store_pb2.AddObservationsRequest(
        observations=[obs("Changed title", "changed", external_id="ext-1"), obs("Second", "other")]))
    assert list(again.ids) == [reply.ids[0], reply.ids[1]] and list(again.created) == [False, False]
    assert store.stats(store_pb2.StatsRequest()).observations == 2


def test_a_failed_batch_leaves_nothing(store):
    good = [obs(f"good {i}", "fine") for i in range(3)]
    bad = obs("bad", "no type", type="")
    with pytest.raises(InvalidArgument, match=r"^observations\[3\]\.type: required"):
        store.add_observations(store_pb2.AddObservationsRequest(observations=[*good, bad]))
    with pytest.raises(InvalidArgument, match=r"observations\[1\]\.tool_use_ids: unknown tool use id 999"):
        store.add_observations(store_pb2.AddObservationsRequest(
            observations=[obs("fine", "x"), obs("refers", "y", tool_use_ids=[999])]))
    stats = store.stats(store_pb2.StatsRequest())
    assert stats.observations == 0 and stats.sessions == 0 and stats.head_seq == 0


def test_observation_text_is_privacy_cleaned(store):
    [oid] = add(store, obs("Deploy <private>with password x</private>done", "token=abcdefghijkl123 ok",
                           facts=["<private>hidden</private>", "visible"]))
    record = store.get_records(store_pb2.GetRecordsRequest(refs=[ref(OBS, oid)])).records[0].observation
    assert record.title == "Deploy done" and "abcdefghijkl123" not in record.narrative
    assert list(record.facts) == ["visible"]


# -- search -----------------------------------------------------------------------------------

def test_natural_language_question_finds_the_row_by_content_words(store):
    target, _ = add(store, obs("Login redirect loop fixed", "The auth middleware kept redirecting to /login"),
                    obs("Unrelated", "Database vacuum schedule"))
    reply = search(store, "how did we fix the redirect loop in the login page?")
    assert reply.hits[0].ref.id == target and reply.hits[0].display_id == f"#{target}"
    assert reply.hits[0].score > 0 and reply.observation_total == 1


def test_search_filters_and_true_totals(store):
    for i in range(30):
        add(store, obs(f"Parser note {i}", "tokenizer grammar", project="a" if i % 2 else "b",
                       type="bugfix" if i % 3 == 0 else "discovery", concepts=["gotcha" if i < 10 else "pattern"],
                       files_modified=[f"src/parse_{i}.py"], created_at_epoch=1_000_000 + i))
    reply = search(store, "tokenizer", filters=common_pb2.Filters(project="a"), page=common_pb2.Page(limit=5))
    assert reply.total == 15 and len(reply.hits) == 5
    assert search(store, "tokenizer", filters=common_pb2.Filters(obs_types=["bugfix"])).total == 10
    assert search(store, "tokenizer", filters=common_pb2.Filters(concepts=["gotcha"])).total == 10
    assert search(store, "tokenizer", filters=common_pb2.Filters(files=["parse_1"])).total == 11
    assert search(store, "tokenizer", filters=common_pb2.Filters(files=["%"])).total == 0
    dated = search(store, "", filters=common_pb2.Filters(date_start_epoch=1_000_010, date_end_epoch=1_000_019),
                   order=common_pb2.ORDER_DATE_ASC)
    assert dated.total == 10 and dated.hits[0].created_at_epoch == 1_000_010
    page2 = search(store, "tokenizer", page=common_pb2.Page(limit=10, offset=25))
    assert len(page2.hits) == 5 and page2.total == 30


def test_platform_filter_goes_through_the_session(store):
    store.upsert_session(store_pb2.UpsertSessionRequest(content_session_id="cx", project="p",
                                                        platform_source="codex", memory_session_id="m-codex"))
    add(store, obs("codex memory", "alpha", memory_session_id="m-codex"), obs("claude memory", "alpha"))
    assert search(store, "alpha", filters=common_pb2.Filters(platform_source="codex")).total == 1
    assert search(store, "alpha", filters=common_pb2.Filters(platform_source="claude")).total == 1


def test_cjk_substrings_are_found(store):
    [oid] = add(store, obs("用户登录失败", "在移动端出现"))
    assert [h.ref.id for h in search(store, "登录").hits] == [oid]
    assert [h.ref.id for h in search(store, "用户登录").hits] == [oid]
    assert [h.ref.id for h in search(store, "登录失败怎么办").hits] == [oid]
    assert search(store, "注册").total == 0
    [jid] = add(store, obs("ログイン画面でエラーが発生した", "セッションの有効期限が切れていた"))
    assert [h.ref.id for h in search(store, "エラー").hits] == [jid]
    assert [h.ref.id for h in search(store, "画面").hits] == [jid]
    assert [h.ref.id for h in search(store, "有効期限 session").hits] == [jid]


def test_empty_query_is_a_listing_and_punctuation_only_finds_nothing(store):
    add(store, obs("one", "x"), obs("two", "y"))
    assert search(store, "").total == 2
    assert search(store, '"*:()').total == 0


def test_summaries_and_prompts_are_searchable_with_display_ids(store):
    prompt = store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="mem-1", project="proj",
                                                               prompt_text="please refactor the scheduler")).prompt
    summary = store.add_summaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="mem-1", project="proj", request="scheduler refactor", learned="cron parsing")]))
    reply = search(store, "scheduler")
    assert {h.display_id for h in reply.hits} == {f"#P{prompt.id}", f"#S{summary.ids[0]}"}
    assert reply.summary_total == 1 and reply.prompt_total == 1
    only = search(store, "scheduler", filters=common_pb2.Filters(kinds=[SUM]))
    assert [h.type for h in only.hits] == ["session"]


def test_hydrate_keeps_order_and_drops_filtered(store):
    a, b, c = add(store, obs("a1", "x", project="p1"), obs("b1", "x", project="p2"), obs("c1", "x", project="p1"))
    rows = store.hydrate(store_pb2.HydrateRequest(refs=[ref(OBS, c), ref(OBS, b), ref(OBS, a), ref(OBS, 999)],
                                                  filters=common_pb2.Filters(project="p1"))).rows
    assert [r.ref.id for r in rows] == [c, a]


def test_list_recent_orders_by_time(store):
    add(store, *[obs(f"t{i}", "x", created_at_epoch=10_000 + i) for i in range(5)])
    recent = store.list_recent(store_pb2.ListRecentRequest(page=common_pb2.Page(limit=2)))
    assert recent.total == 5 and [r.created_at_epoch for r in recent.rows] == [10_004, 10_003]


# -- timeline -------------------------------------------------------------------------------

def test_timeline_mixes_kinds_in_stable_order_with_depth_in_items(store):
    ids = add(store, *[obs(f"step {i}", "x", created_at_epoch=5_000 + (i // 2) * 10) for i in range(6)])
    summary = store.add_summaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="mem-1", project="proj", request="wrap up", created_at_epoch=5_010)])).ids[0]
    reply = store.timeline(store_pb2.StoreTimelineRequest(ref=ref(OBS, ids[2]), depth_before=2, depth_after=2))
    shown = [r.display_id for r in reply.rows]
    assert shown == [f"#{ids[0]}", f"#{ids[1]}", f"#{ids[2]}", f"#{ids[3]}", f"#S{summary}"]
    assert reply.anchor_index == 2 and reply.items[2].observation.id == ids[2]
    by_time = store.timeline(store_pb2.StoreTimelineRequest(epoch=5_011, depth_before=1, depth_after=0))
    assert [r.display_id for r in by_time.rows] == [f"#S{summary}", f"#{ids[4]}"] and by_time.anchor_index == 1
    late = store.timeline(store_pb2.StoreTimelineRequest(epoch=99_999, depth_before=1))
    assert late.anchor_index == -1 and len(late.rows) == 1
    with pytest.raises(NotFound):
        store.timeline(store_pb2.StoreTimelineRequest(ref=ref(OBS, ids[0]),
                                                      filters=common_pb2.Filters(project="elsewhere")))
    with pytest.raises(InvalidArgument, match="depth_before: must be between 0 and 20"):
        store.timeline(store_pb2.StoreTimelineRequest(epoch=1, depth_before=21))


# -- tool uses --------------------------------------------------------------------------------

def test_tool_uses_are_capped_linked_and_idempotent(settings):
    from mnemo.config import with_overrides

    store = Store.from_settings(with_overrides(settings, tool_uses_cap_bytes=64))
    try:
        call = common_pb2.ToolUse(content_session_id="c9", project="p", tool_use_id="toolu_1", tool_name="Bash",
                                  tool_input='{"command": "' + "é" * 100 + '"}', tool_response="ok")
        first = store.record_tool_use(store_pb2.RecordToolUseRequest(tool_use=call))
        again = store.record_tool_use(store_pb2.RecordToolUseRequest(tool_use=call))
        assert first.id == again.id and first.input_truncated and not first.response_truncated
        assert len(first.tool_input.encode()) <= 64 and first.input_size > 64
        [oid] = add(store, obs("ran bash", "x", memory_session_id="c9", tool_use_ids=[first.id]))
        found = store.get_tool_uses(store_pb2.GetToolUsesRequest(observation_ids=[oid])).tool_uses
        assert [t.id for t in found] == [first.id] and list(found[0].observation_ids) == [oid]
        record = store.get_records(store_pb2.GetRecordsRequest(refs=[ref(OBS, oid)])).records[0]
        assert list(record.observation.tool_use_ids) == [first.id]
        by_key = store.get_tool_uses(store_pb2.GetToolUsesRequest(tool_use_ids=["toolu_1"], project="p"))
        assert len(by_key.tool_uses) == 1
    finally:
        store.close()


# -- deletes and change feed --------------------------------------------------------------

def test_change_feed_records_upserts_and_deletes_in_order(store):
    a, b = add(store, obs("first", "x"), obs("second", "y"))
    store.delete_records(store_pb2.DeleteRecordsRequest(refs=[ref(OBS, a)]))
    feed = store.read_changes(store_pb2.ReadChangesRequest())
    ops = [(c.ref.id, c.op, c.record.WhichOneof("record")) for c in feed.changes]
    assert ops == [(a, 1, None), (b, 1, "observation"), (a, 2, None)]
    assert feed.head_seq == feed.changes[-1].seq
    later = store.read_changes(store_pb2.ReadChangesRequest(after_seq=feed.changes[0].seq, limit=1))
    assert [c.ref.id for c in later.changes] == [b]
    assert search(store, "first").total == 0


# -- cursors, work state, corpora ---------------------------------------------------------

def test_cursor_save_load_expiry_and_purge(store):
    token = "ms_" + "a" * 24
    store.save_cursor(store_pb2.Cursor(token=token, state_json='{"q": 1}', created_at_epoch=1000,
                                       expires_at_epoch=2000))
    assert store.load_cursor(store_pb2.LoadCursorRequest(token=token, now_epoch=1500)).state_json == '{"q": 1}'
    with pytest.raises(NotFound):
        store.load_cursor(store_pb2.LoadCursorRequest(token=token, now_epoch=2000))
    with pytest.raises(NotFound):
        store.load_cursor(store_pb2.LoadCursorRequest(token="ms_" + "b" * 24, now_epoch=1))
    assert store.purge_cursors(store_pb2.PurgeCursorsRequest(now_epoch=2001)).purged == 1
    with pytest.raises(InvalidArgument, match="token"):
        store.save_cursor(store_pb2.Cursor(token="bad", state_json="{}"))
    with pytest.raises(InvalidArgument, match="state_json: must be valid JSON"):
        store.save_cursor(store_pb2.Cursor(token=token, state_json="{"))


def test_work_state_versions_conflicts_and_history(store):
    first = store.write_work_state(store_pb2.WriteWorkStateRequest(project="p", content="v1"))
    second = store.write_work_state(store_pb2.WriteWorkStateRequest(project="p", content="v2", expected_version=1))
    assert (first.version, second.version, second.key) == (1, 2, "default")
    with pytest.raises(Aborted, match="version 2, not 1"):
        store.write_work_state(store_pb2.WriteWorkStateRequest(project="p", content="v3", expected_version=1))
    read = store.read_work_state(store_pb2.ReadWorkStateRequest(project="p", history=5))
    assert read.current.content == "v2" and [h.version for h in read.history] == [1]
    assert not store.read_work_state(store_pb2.ReadWorkStateRequest(project="q")).HasField("current")
    with pytest.raises(InvalidArgument, match="expected_version: must not be negative"):
        store.write_work_state(store_pb2.WriteWorkStateRequest(project="p", content="x", expected_version=-1))


def test_corpora_put_get_list_update(store):
    corpus = store_pb2.Corpus(name="auth-notes", description="d", filter=store_pb2.CorpusFilter(project="p"),
                              observation_ids=[3, 1], stats=store_pb2.CorpusStats(observation_count=2,
                                                                                 type_breakdown={"bugfix": 2}))
    stored = store.put_corpus(corpus)
    assert stored.priming_state == "unprimed" and list(stored.observation_ids) == [3, 1]
    assert stored.stats.type_breakdown["bugfix"] == 2
    listed = store.list_corpora(store_pb2.ListCorporaRequest()).corpora
    assert [c.name for c in listed] == ["auth-notes"] and not listed[0].observation_ids
    updated = store.update_corpus(store_pb2.UpdateCorpusRequest(
        name="auth-notes", priming_state="primed", expected_state="unprimed",
        append_turn=store_pb2.CorpusTurn(question="q", answer="a", citations=[3])))
    assert updated.priming_state == "primed" and updated.history[0].citations == [3]
    with pytest.raises(Aborted):
        store.update_corpus(store_pb2.UpdateCorpusRequest(name="auth-notes", expected_state="unprimed"))
    with pytest.raises(NotFound):
        store.get_corpus(store_pb2.GetCorpusRequest(name="missing"))
    with pytest.raises(InvalidArgument, match="^name"):
        store.put_corpus(store_pb2.Corpus(name="../etc"))


# -- export / import ----------------------------------------------------------------------

def test_export_then_import_is_lossless_and_idempotent(store, home):
    store.record_prompt(store_pb2.RecordPromptRequest(content_session_id="mem-1", project="proj",
                                                      prompt_text="start", created_at_epoch=1_000))
    add(store, obs("exported", "n", created_at_epoch=2_000, created_at="2026-01-01T00:00:02.000Z"))
    store.add_summaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
        memory_session_id="mem-1", project="proj", request="r", created_at_epoch=3_000)]))
    store.record_tool_use(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
        content_session_id="mem-1", tool_name="Read", tool_use_id="t1", created_at_epoch=4_000)))
    items = list(store.export(store_pb2.ExportRequest(project="proj")))
    assert [i.WhichOneof("item") for i in items] == ["session", "prompt", "observation", "summary", "tool_use"]
    other = Store(home / "other.db")
    try:
        bad = store_pb2.ExportItem(observation=common_pb2.Observation(project="p"))
        reply = other.import_items(store_pb2.ImportRequest(items=[*items, bad]))
        assert reply.imported == 5 and reply.skipped == 0
        assert [e.index for e in reply.errors] == [5] and "memory_session_id: required" in reply.errors[0].message
        assert other.import_items(store_pb2.ImportRequest(items=items)).skipped == 5
        copy = other.get_records(store_pb2.GetRecordsRequest(refs=[ref(OBS, 1)])).records[0].observation
        assert (copy.created_at_epoch, copy.created_at) == (2_000, "2026-01-01T00:00:02.000Z")
    finally:
        other.close()


def test_an_error_after_rows_were_written_rolls_the_whole_request_back(store, monkeypatch):
    from store_svc import observations

    real = observations.insert_observations

    def insert_then_fail(conn, items, where="observations"):
        real(conn, items, where)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(observations, "insert_observations", insert_then_fail)
    with pytest.raises(RuntimeError):
        add(store, obs("written then undone", "x"))
    monkeypatch.undo()
    stats = store.stats(store_pb2.StatsRequest())
    assert (stats.observations, stats.sessions, stats.head_seq) == (0, 0, 0)
    assert search(store, "undone").total == 0


def test_large_batches_are_one_transaction_with_in_batch_duplicates(store):
    many = [obs(f"bulk {i}", "n") for i in range(260)]
    broken = [*many[:250], obs("bad", "x", type="Not A Type"), *many[250:]]
    with pytest.raises(InvalidArgument, match=r"^observations\[250\]\.type: lowercase"):
        add(store, *broken)
    assert store.stats(store_pb2.StatsRequest()).observations == 0
    reply = store.add_observations(store_pb2.AddObservationsRequest(observations=[*many, many[5], many[150]]))
    assert len(reply.ids) == 262 and reply.ids[260] == reply.ids[5] and reply.ids[261] == reply.ids[150]
    assert list(reply.created) == [True] * 260 + [False, False]
    assert sorted(reply.ids[:260]) == list(reply.ids[:260])


def test_only_exclusions_list_the_rest_newest_first(store):
    add(store, *[obs(f"item {i}", "redis" if i == 1 else "plain", created_at_epoch=100 + i) for i in range(4)])
    reply = search(store, "-redis", syntax=store_pb2.QUERY_SYNTAX_OPERATORS)
    assert [h.created_at_epoch for h in reply.hits] == [103, 102, 100] and reply.total == 3
