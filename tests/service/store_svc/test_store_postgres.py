"""What only the PostgreSQL backend has to prove: several store replicas (two Store instances
with a pool each, like two processes) over one database keep the change feed gapless in
commit order, dedupe exactly once, share cursors and work state; text PostgreSQL would refuse
is stored; the backend is chosen by settings and by `mnemo serve store --backend --dsn`."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from mnemo.config import with_overrides
from mnemo.errors import InvalidArgument, Unavailable
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, search_pb2, store_pb2, store_pb2_grpc
from store_svc.core import Store
from store_svc.pg.backend import PgBackend
from tests.conftest import add_observation, sync_vectors
from tests.grpcurl_support import SERVICE_TOKEN, serve, stop

pytestmark = pytest.mark.service


@pytest.fixture
def replicas(postgres_database):
    """Two stores over one database, each with its own connection pool."""
    first, second = Store(backend=PgBackend(postgres_database, pool_size=4)), None
    try:
        second = Store(backend=PgBackend(postgres_database, pool_size=4))
        yield first, second
    finally:
        first.close()
        if second is not None:
            second.close()


def _obs(title: str, session: str = "m", **fields) -> common_pb2.Observation:
    return common_pb2.Observation(memory_session_id=session, project="p", type="discovery", title=title, **fields)


def test_a_follower_sees_every_change_once_in_order_while_two_replicas_write(replicas, postgres_database):
    writers_per_replica, batches = 3, 12
    seen: list[int] = []
    done = threading.Event()
    failures: list[BaseException] = []

    def write(store: Store, name: str) -> None:
        try:
            for i in range(batches):
                ids = store.add_observations(store_pb2.AddObservationsRequest(observations=[
                    _obs(f"{name} note {i} part {j}", session=name) for j in range(1 + i % 3)])).ids
                if i % 4 == 3:  # deletes are changes too
                    store.delete_records(store_pb2.DeleteRecordsRequest(
                        refs=[common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=ids[0])]))
        except BaseException as err:  # surfaced by the assertion below
            failures.append(err)

    def follow(store: Store) -> None:
        after = 0
        while True:
            finished = done.is_set()  # read before the page: a page read after it is complete
            reply = store.read_changes(store_pb2.ReadChangesRequest(after_seq=after, limit=7))
            seen.extend(change.seq for change in reply.changes)
            if reply.changes:
                after = reply.changes[-1].seq
            elif finished:
                return

    follower = threading.Thread(target=follow, args=(replicas[1],))
    follower.start()
    threads = [threading.Thread(target=write, args=(store, f"r{n}w{w}"))
               for n, store in enumerate(replicas) for w in range(writers_per_replica)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    follower.join(timeout=60)
    assert not failures and not follower.is_alive()
    with psycopg.connect(postgres_database) as conn:
        committed = [row[0] for row in conn.execute("SELECT seq FROM change_feed ORDER BY seq")]
    assert len(committed) == 2 * writers_per_replica * (sum(1 + i % 3 for i in range(batches)) + batches // 4)
    assert seen == committed  # every committed change, once, in order: none skipped, none repeated


def test_two_replicas_store_one_row_for_the_same_observation_sent_at_once(replicas):
    start = threading.Barrier(8)
    answers: list[tuple[int, bool, bool]] = []
    failures: list[BaseException] = []

    def send(store: Store, external_id: str, session: str) -> None:
        try:
            start.wait(timeout=30)
            reply = store.add_observations(store_pb2.AddObservationsRequest(observations=[
                _obs("Same finding", session=session, narrative="identical text", external_id=external_id)]))
            answers.append((reply.ids[0], reply.created[0], bool(external_id)))
        except BaseException as err:
            failures.append(err)

    # Both dedupe keys: the same external id from four sessions, the same content in one session.
    threads = [threading.Thread(target=send, args=(replicas[i % 2], "ext-1", f"s{i}")) for i in range(4)]
    threads += [threading.Thread(target=send, args=(replicas[i % 2], "", "m")) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
    external = [answer for answer in answers if answer[2]]
    same_content = [answer for answer in answers if not answer[2]]
    for group in (external, same_content):
        assert len(group) == 4 and len({row_id for row_id, _, _ in group}) == 1
        assert sum(created for _, created, _ in group) == 1
    assert replicas[0].stats(store_pb2.StatsRequest()).observations == 2


def test_any_replica_continues_a_cursor_and_work_state_of_another(replicas):
    first, second = replicas
    token = "ms_" + "a" * 24
    first.save_cursor(store_pb2.Cursor(token=token, state_json='{"offset": 20}'))
    assert second.load_cursor(store_pb2.LoadCursorRequest(token=token)).state_json == '{"offset": 20}'
    first.write_work_state(store_pb2.WriteWorkStateRequest(project="p", content="step 1"))
    second.write_work_state(store_pb2.WriteWorkStateRequest(project="p", content="step 2", expected_version=1))
    state = first.read_work_state(store_pb2.ReadWorkStateRequest(project="p", history=5))
    assert (state.current.version, state.current.content, [h.content for h in state.history]) == (2, "step 2",
                                                                                                  ["step 1"])
    second.put_corpus(store_pb2.Corpus(name="c1", description="shared"))
    assert [c.name for c in first.list_corpora(store_pb2.ListCorporaRequest()).corpora] == ["c1"]


def test_nul_characters_are_stored_and_searched_not_refused(replicas):
    """PostgreSQL refuses NUL in text; the adapter binds U+FFFD instead of failing the request."""
    store = replicas[0]
    [oid] = store.add_observations(store_pb2.AddObservationsRequest(observations=[
        _obs("nul\x00in title", narrative="zero \x00 byte", files_read=["a\x00b.py"])])).ids
    record = store.get_records(store_pb2.GetRecordsRequest(
        refs=[common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=oid)])).records[0].observation
    assert record.title == "nul\ufffdin title" and record.narrative == "zero \ufffd byte"
    assert store.search(store_pb2.StoreSearchRequest(query="byte\x00")).hits[0].ref.id == oid
    files = common_pb2.Filters(files=["a\x00b"])
    assert [h.ref.id for h in store.search(store_pb2.StoreSearchRequest(filters=files)).hits] == [oid]


def test_the_backend_is_chosen_by_settings_and_refused_when_unknown(settings, postgres_database):
    with pytest.raises(InvalidArgument, match="store_backend"):
        Store.from_settings(with_overrides(settings, store_backend="mysql"))
    with pytest.raises(InvalidArgument, match="store_dsn"):
        Store.from_settings(with_overrides(settings, store_backend="postgres"))
    store = Store.from_settings(with_overrides(settings, store_backend="postgres", store_dsn=postgres_database))
    try:
        assert store.backend.name == "postgres" and store.stats(store_pb2.StatsRequest()).schema_version >= 7
    finally:
        store.close()
    assert not settings.database.exists()  # nothing went to the SQLite file
    # Refused with the setting to check (the pool's own connect timeout ends the attempt).
    with pytest.raises(Unavailable, match=r"cannot connect to PostgreSQL \(store_dsn\)"):
        PgBackend("host=/nonexistent-mnemo dbname=nothing", connect_timeout_s=1)


def test_mnemo_serve_store_with_backend_and_dsn_flags(settings, postgres_database):
    proc, address = serve(settings, "store", "--backend", "postgres", "--dsn", postgres_database)
    try:
        channel = open_channel(address, auth_token=SERVICE_TOKEN)
        stub = store_pb2_grpc.StoreServiceStub(channel)
        stub.AddObservations(store_pb2.AddObservationsRequest(observations=[_obs("Served from postgres")]),
                             timeout=10)
        assert stub.Search(store_pb2.StoreSearchRequest(query="postgres"), timeout=10).total == 1
        channel.close()
    finally:
        stop(proc)
    with psycopg.connect(postgres_database) as conn:
        assert conn.execute("SELECT title FROM observations").fetchall() == [("Served from postgres",)]
    assert not settings.database.exists()


@pytest.mark.chroma
@pytest.mark.parametrize("store_backend", ["postgres"])
def test_the_whole_local_stack_runs_on_postgres(store_backend, store_stub, vector_stub, search_stub, settings):
    """vector_svc and search_svc are unchanged clients: hybrid search over a PostgreSQL store."""
    target = add_observation(store_stub, title="Fixed login redirect loop", narrative="The callback looped forever.",
                             files_modified=["/repo/src/login.ts"])
    add_observation(store_stub, title="Unrelated build tweak", narrative="Bumped the bundler version.")
    sync_vectors(vector_stub)
    reply = search_stub.Search(search_pb2.SearchRequest(query="login redirect"))
    assert reply.strategy == "hybrid" and reply.rows[0].ref.id == target
    assert settings.store_backend == "postgres" and not settings.database.exists()


def test_curation_forgets_edits_marks_and_counts_on_postgres(replicas, postgres_database):
    """Forget, EditObservation, MarkWrong and Activity: the SQL with dialect parts (the feed and
    mark triggers, the day of an epoch, the vacuum after a forget)."""
    from store_svc import curation

    store, other = replicas
    obs = common_pb2.DOC_KIND_OBSERVATION
    ids = list(store.add_observations(store_pb2.AddObservationsRequest(observations=[
        _obs("Keep this", session="s1"), _obs("Forget this", session="s1"),
        _obs("Project gone", session="s2", created_at_epoch=1_767_225_600_000)])).ids)  # 2026-01-01
    head = store.read_changes(store_pb2.ReadChangesRequest()).head_seq
    edited = curation.edit_rpc(other, store_pb2.EditObservationRequest(id=ids[0], title="Kept and renamed"))
    assert edited.title == "Kept and renamed"
    changes = store.read_changes(store_pb2.ReadChangesRequest(after_seq=head)).changes
    assert [(c.ref.id, c.op) for c in changes] == [(ids[0], store_pb2.CHANGE_OP_UPSERT)]  # update trigger
    marked = curation.mark_wrong_rpc(store, store_pb2.MarkWrongRequest(refs=[common_pb2.Ref(kind=obs, id=ids[1])],
                                                                       reason="wrong"))
    assert [r.id for r in marked.changed] == [ids[1]]
    reply = curation.forget_rpc(other, store_pb2.ForgetRequest(refs=[common_pb2.Ref(kind=obs, id=ids[1])]))
    assert reply.observations == 1
    with psycopg.connect(postgres_database) as conn:  # the mark went with its record
        assert conn.execute("SELECT count(*) FROM marked_wrong").fetchone()[0] == 0
    assert curation.forget_rpc(store, store_pb2.ForgetRequest(project="p")).sessions == 2
    assert store.stats(store_pb2.StatsRequest()).observations == 0
    activity = curation.activity_rpc(store, store_pb2.ActivityRequest(days=3))
    assert [d.day for d in activity.days][-1] == time.strftime("%Y-%m-%d", time.gmtime())
    assert store.read_changes(store_pb2.ReadChangesRequest(after_seq=head)).changes[-1].op == \
        store_pb2.CHANGE_OP_DELETE


def test_every_sqlite_migration_has_its_postgresql_twin():
    """A migration added to store_svc/schema.py needs its twin in store_svc/pg/schema.py (same number and name)."""
    from store_svc import schema
    from store_svc.pg import schema as pg_schema

    assert [m[:2] for m in pg_schema.MIGRATIONS] == [m[:2] for m in schema.MIGRATIONS]


def test_cached_document_frequencies_follow_every_write_of_any_replica(replicas):
    """Ranking reuses each term's counted document frequency until the change feed moves: a
    write by another replica must change the scores at once, to what a fresh count gives."""
    from store_svc.pg import fulltext

    reader, writer = replicas
    writer.add_observations(store_pb2.AddObservationsRequest(observations=[
        _obs("alpha beta"), _obs("alpha gamma"), *[_obs(f"filler {i}") for i in range(6)]]))
    request = store_pb2.StoreSearchRequest(query="alpha gamma", page=common_pb2.Page(limit=5))

    def scores() -> dict[int, float]:
        return {h.ref.id: h.score for h in reader.search(request).hits}

    before = scores()
    assert scores() == before and fulltext._df_cache  # counted once, then reused
    writer.add_observations(store_pb2.AddObservationsRequest(observations=[
        _obs(f"gamma ray {i}") for i in range(5)]))  # gamma becomes common: its idf drops
    after = scores()
    fulltext._df_cache.clear()
    assert scores() == after
    both = next(i for i, s in before.items() if s == max(before.values()))
    assert after[both] < before[both]


def test_a_bulk_load_gets_planner_statistics_from_the_writer(replicas, postgres_database):
    """Past ANALYZE_MIN_CHANGES new rows in a never-analyzed table the writer runs ANALYZE, so
    full-text searches use the GIN index at once instead of scanning the whole table."""
    from store_svc.pg.backend import ANALYZE_MIN_CHANGES

    store, _ = replicas

    def reltuples() -> float:
        with psycopg.connect(postgres_database) as conn:
            return conn.execute("SELECT reltuples FROM pg_class WHERE relname = 'observations'").fetchone()[0]

    assert reltuples() < 0  # never analyzed
    for start in range(0, ANALYZE_MIN_CHANGES + 50, 500):  # requests carry at most 1,000 items
        store.add_observations(store_pb2.AddObservationsRequest(observations=[
            _obs(f"bulk note {i}") for i in range(start, start + 500)]))
    deadline, extra = time.monotonic() + 15, 0
    while reltuples() < ANALYZE_MIN_CHANGES and time.monotonic() < deadline:
        # the writer reads the table's change counter, which the server publishes up to a second late
        extra += 1
        store.add_observations(store_pb2.AddObservationsRequest(observations=[_obs(f"late note {extra}")]))
    assert reltuples() >= ANALYZE_MIN_CHANGES
