"""Record ids on the team server (store_svc/migrations/postgres/0010_ids.sql, and on SQLite once
the store holds a user token, sqlite/0013_sqlite_ids.sql with store_svc/ids.py): the ids a
project gets back do not depend on what other projects write, stay ordered within the project,
and an upgraded database keeps the ids it gave out."""

from __future__ import annotations

import pytest

from mnemo.v1 import common_pb2, store_pb2
from store_svc import tokens
from store_svc.core import Store
from store_svc.curation import forget_rpc
from store_svc.pg.backend import PgBackend
from tests.pg import create_database, drop_database
from tests.unit.store_svc.upgrade import old_observations, write_before

pytestmark = pytest.mark.service

STRIDE = 2**20  # the step between one project's consecutive ids (0010_ids.sql)
ID_LIMIT = 2**53  # every id stays exact as a JSON number
TABLES = ("sdk_sessions", "user_prompts", "observations", "session_summaries", "tool_uses")


def _note(project: str, title: str) -> common_pb2.Observation:
    return common_pb2.Observation(memory_session_id=f"m-{project}", project=project, type="discovery", title=title)


def _observation(store: Store, project: str, title: str) -> int:
    return store.add_observations(store_pb2.AddObservationsRequest(observations=[_note(project, title)])).ids[0]


def _one_of_each(store: Store, project: str, n: int) -> dict[str, int]:
    """One record of every table whose ids users see, written for `project`; their ids by table."""
    session = store.upsert_session(
        store_pb2.UpsertSessionRequest(
            content_session_id=f"c-{project}-{n}", memory_session_id=f"m-{project}-{n}", project=project
        )
    )
    prompt = store.record_prompt(
        store_pb2.RecordPromptRequest(
            content_session_id=session.content_session_id, project=project, prompt_text=f"prompt {n}"
        )
    ).prompt
    summary = store.add_summaries(
        store_pb2.AddSummariesRequest(
            summaries=[
                common_pb2.Summary(memory_session_id=session.memory_session_id, project=project, request=f"request {n}")
            ]
        )
    )
    tool_use = store.record_tool_use(
        store_pb2.RecordToolUseRequest(
            tool_use=common_pb2.ToolUse(
                content_session_id=session.content_session_id, project=project, tool_use_id=f"t{n}", tool_name="Read"
            )
        )
    )
    return {
        "sdk_sessions": session.id,
        "user_prompts": prompt.id,
        "session_summaries": summary.ids[0],
        "tool_uses": tool_use.id,
        "observations": _observation(store, project, f"note {n}"),
    }


def _steps(values: list[int]) -> list[int]:
    return [b - a for a, b in zip(values, values[1:], strict=False)]


def _team_sqlite(path) -> Store:
    """A SQLite store that became a team's: it holds a user token."""
    store = Store(path)
    tokens.add_token(store, store_pb2.AddTokenRequest(user="ana", projects=["alpha"]))
    return store


def _alpha_ids(where, beta_writes: bool) -> tuple[list[dict[str, int]], dict[str, int]]:
    """alpha's ids of 4 rounds on a fresh database (a PostgreSQL dsn, or a SQLite path made a team
    store), with beta writing more and more in between or not."""
    store = Store(backend=PgBackend(where, pool_size=2)) if isinstance(where, str) else _team_sqlite(where)
    try:
        alpha = []
        for n in range(4):
            alpha.append(_one_of_each(store, "alpha", n))
            for m in range(n * 3 if beta_writes else 0):
                _one_of_each(store, "beta", 10 * n + m)
        return alpha, _one_of_each(store, "beta", 99)
    finally:
        store.close()


def test_the_steps_between_a_projects_ids_do_not_depend_on_other_projects(postgres_dsn):
    dsns = [create_database(postgres_dsn) for _ in range(2)]
    try:
        alone, _ = _alpha_ids(dsns[0], beta_writes=False)
        crowded, beta = _alpha_ids(dsns[1], beta_writes=True)
    finally:
        for dsn in dsns:
            drop_database(postgres_dsn, dsn)
    _assert_independent(alone, crowded, beta)


def test_on_a_sqlite_team_store_too_the_steps_do_not_depend_on_other_projects(tmp_path):
    alone, _ = _alpha_ids(tmp_path / "alone.db", beta_writes=False)
    crowded, beta = _alpha_ids(tmp_path / "crowded.db", beta_writes=True)
    _assert_independent(alone, crowded, beta)


def test_a_sqlite_store_without_user_tokens_keeps_its_small_ids(tmp_path):
    """One developer's store: AUTOINCREMENT, ids 1, 2, 3, as before."""
    store = Store(tmp_path / "mine.db")
    try:
        assert [_observation(store, p, f"n{i}") for i, p in enumerate(("alpha", "beta", "alpha"))] == [1, 2, 3]
    finally:
        store.close()


def test_a_sqlite_store_that_gets_a_token_gives_new_ids_above_every_old_one(tmp_path):
    store = Store(tmp_path / "grown.db")
    try:
        old = [_observation(store, "alpha", f"old {n}") for n in range(3)]
        last = common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=old[-1])
        forget_rpc(store, store_pb2.ForgetRequest(refs=[last]))  # its id is never given again
        tokens.add_token(store, store_pb2.AddTokenRequest(user="ana", projects=["alpha"]))
        new = [_observation(store, project, f"new {n}") for n in range(2) for project in ("alpha", "beta")]
        batch = store.add_observations(store_pb2.AddObservationsRequest(observations=[
            common_pb2.Observation(memory_session_id="m-alpha", project=p, type="discovery", title=f"batch {p} {n}")
            for n in range(2) for p in ("alpha", "beta")])).ids
        refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in [*old[:2], *new, *batch]]
        rows = [r.observation for r in store.get_records(store_pb2.GetRecordsRequest(refs=refs)).records]
    finally:
        store.close()
    assert old == [1, 2, 3] and min(new) > STRIDE and len(rows) == 2 + len(new) + len(batch)
    alpha = [i for i, r in zip([*new, *batch], rows[2:], strict=True) if r.project == "alpha"]
    assert _steps(alpha) == [STRIDE] * 3 and alpha == sorted(alpha)  # in write order, one step per own insert


def _assert_independent(alone: list[dict[str, int]], crowded: list[dict[str, int]], beta: dict[str, int]) -> None:
    for table in TABLES:
        steps = _steps([row[table] for row in crowded])
        assert steps == _steps([row[table] for row in alone]), table  # beta's 0, 3, 6 records show nowhere
        assert all(step > 0 and step % STRIDE == 0 for step in steps), table
        assert crowded[0][table] % STRIDE != beta[table] % STRIDE  # each project its own slot
        assert crowded[-1][table] < ID_LIMIT


def test_records_keep_their_order_and_are_fetched_by_id(postgres_database):
    store = Store(backend=PgBackend(postgres_database, pool_size=2))
    try:
        written = [_observation(store, project, f"{project} {n}") for n in range(3) for project in ("alpha", "beta")]
        refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in written]
        rows = [r.observation for r in store.get_records(store_pb2.GetRecordsRequest(refs=refs)).records]
    finally:
        store.close()
    assert [r.id for r in rows] == written  # in the order asked
    by_project = {p: [r.id for r in rows if r.project == p] for p in ("alpha", "beta")}
    assert all(got == sorted(got) and len(got) == 3 for got in by_project.values())
    assert {r.title for r in rows} == {f"{p} {n}" for p in ("alpha", "beta") for n in range(3)}


@pytest.mark.parametrize("store_backend", ["postgres"])
def test_an_upgraded_database_keeps_its_ids_and_gives_new_ones_above_them(settings, monkeypatch):
    notes = [_note("alpha", f"old {n}") for n in range(3)]
    old = write_before(settings, monkeypatch, 9, lambda s: old_observations(s, *notes))
    assert old == [1, 2, 3]  # the global sequence before migration 10
    store = Store.from_settings(settings)
    try:
        new = [_observation(store, "alpha", f"new {n}") for n in range(2)]
        refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i) for i in old]
        kept = [r.observation for r in store.get_records(store_pb2.GetRecordsRequest(refs=refs)).records]
    finally:
        store.close()
    assert sorted((r.id, r.title) for r in kept) == [(i, f"old {n}") for n, i in enumerate(old)]
    assert new[0] > old[-1] and _steps(new) == [STRIDE]


@pytest.mark.parametrize("store_backend", ["sqlite"])
def test_a_sqlite_store_that_held_tokens_before_migration_13_switches_when_it_upgrades(settings, monkeypatch):
    def before(store: Store) -> list[int]:
        tokens.add_token(store, store_pb2.AddTokenRequest(user="ana", projects=["alpha"]))
        return old_observations(store, *[_note("alpha", f"old {n}") for n in range(2)])

    old = write_before(settings, monkeypatch, 12, before)
    store = Store.from_settings(settings)
    try:
        new = [_observation(store, "alpha", f"new {n}") for n in range(2)]
    finally:
        store.close()
    assert old == [1, 2] and new[0] > STRIDE and _steps(new) == [STRIDE]
