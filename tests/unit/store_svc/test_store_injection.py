"""No query text can make a search fail or change its meaning (in process; the gRPC twin is in
tests/service/store_svc). Full-text path and LIKE (files filter) path, plus hypothesis properties."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from mnemo.query import COLUMNS, parse, to_fts5
from mnemo.v1 import common_pb2, store_pb2
from store_svc.core import Store
from tests.pg import create_database, drop_database
from tests.unit.store_svc.hostile import hostile_queries

pytestmark = pytest.mark.unit

QUERIES = hostile_queries()


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@contextmanager
def _new_store(request, tmp_path_factory, name: str) -> Iterator[Store]:
    """A store on the module's backend (the fixture's param): a SQLite file or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        s = Store(tmp_path_factory.mktemp(name) / "mnemo.db")
        yield s
        s.close()
        return
    from store_svc.pg.backend import PgBackend

    server = request.getfixturevalue("postgres_dsn")
    dsn = create_database(server)
    s = Store(backend=PgBackend(dsn, pool_size=2))
    yield s
    s.close()
    drop_database(server, dsn)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request, tmp_path_factory):
    with _new_store(request, tmp_path_factory, "inj") as s:
        s.add_observations(store_pb2.AddObservationsRequest(observations=[
            common_pb2.Observation(memory_session_id="m", project="p", type="bugfix", title="Login redirect loop",
                                   narrative="cache 50% hit_rate \\ path", files_modified=["src/a%b_c\\d.py"]),
            common_pb2.Observation(memory_session_id="m", project="p", type="discovery", title="用户登录失败",
                                   narrative="ログイン 한국어", files_read=["docs/登录.md"]),
        ]))
        yield s


def test_the_suite_is_large_enough():
    assert len(QUERIES) >= 300


def test_every_hostile_string_parses_to_a_safe_expression():
    for text in QUERIES:
        for operators in (False, True):
            expression = to_fts5(parse(text, operators=operators))
            assert expression is None or isinstance(expression, str)


def test_every_hostile_string_is_a_normal_full_text_search(store):
    for text in filter(_encodable, QUERIES):
        for syntax in (store_pb2.QUERY_SYNTAX_PLAIN, store_pb2.QUERY_SYNTAX_OPERATORS):
            reply = store.search(store_pb2.StoreSearchRequest(query=text, syntax=syntax))
            assert reply.total >= len(reply.hits)


def test_every_hostile_string_is_a_normal_files_filter(store):
    for text in filter(_encodable, QUERIES):
        reply = store.search(store_pb2.StoreSearchRequest(filters=common_pb2.Filters(files=[text])))
        assert reply.total >= len(reply.hits)


def test_like_wildcards_are_literal(store):
    def files(fragment: str) -> int:
        return store.search(store_pb2.StoreSearchRequest(filters=common_pb2.Filters(files=[fragment]))).total

    assert files("a%b_c\\d") == 1 and files("%") == 1 and files("_") == 1 and files("\\") == 1
    assert files("a_b") == 0 and files("登录") == 1


def test_sql_fragments_do_not_change_the_query(store):
    assert store.search(store_pb2.StoreSearchRequest(query="' OR '1'='1")).total == 0
    assert store.search(store_pb2.StoreSearchRequest(query="login' --")).total == 1
    assert store.stats(store_pb2.StatsRequest()).observations == 2


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300), st.booleans())
def test_any_text_is_a_normal_search(store, text, operators):
    syntax = store_pb2.QUERY_SYNTAX_OPERATORS if operators else store_pb2.QUERY_SYNTAX_PLAIN
    reply = store.search(store_pb2.StoreSearchRequest(query=text, syntax=syntax))
    assert reply.total >= len(reply.hits)


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=3, max_size=12),
       noise=st.text(max_size=40))
def test_a_stored_unique_word_is_found(store, word, noise):
    if parse(word).cjk or len(parse(word).terms) != 1:
        return  # CJK and multi-token words take other paths, tested separately
    unique = f"zq{word}"
    [oid] = store.add_observations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="prop", project="p", type="discovery", title=f"note {unique}",
        narrative=noise or "n")])).ids
    found = store.search(store_pb2.StoreSearchRequest(query=f"where is {unique}?", page=common_pb2.Page(limit=500)))
    assert oid in [h.ref.id for h in found.hits]


# -- literal operators and column filters, through real SQLite ------------------------------------

_QUOTED = re.compile(r'"(?:[^"]|"")*"')
_COLUMN_FILTER = re.compile(r"\{([^}]*)\} :")
_OPERATOR_FORMS = ("title:{}", 'title:"{}"', "-title:{}", "NOT title:{}", "{}*", '"{}" AND {}', "{} OR {} NOT {}",
                   'narrative:"{}" -{}', "prompt:{}*", "request:{} OR title:{}")


def _words(found: store_pb2.StoreSearchResponse) -> set[int]:
    return {hit.ref.id for hit in found.hits}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def columns_store(request, tmp_path_factory):
    with _new_store(request, tmp_path_factory, "cols") as s:
        s.upsert_session(store_pb2.UpsertSessionRequest(content_session_id="c", memory_session_id="m", project="p"))
        ids = s.add_observations(store_pb2.AddObservationsRequest(observations=[
            common_pb2.Observation(memory_session_id="m", project="p", type="discovery", title="Bazooka loader",
                                   narrative="The quartz cache warms on start."),
            common_pb2.Observation(memory_session_id="m", project="p", type="discovery", title="Quartz scheduler",
                                   narrative="Runs the nightly jobs."),
            common_pb2.Observation(memory_session_id="m", project="p", type="feature", title="Added an OR gate",
                                   narrative="Logic for the NOT gate follows."),
            common_pb2.Observation(memory_session_id="m", project="p", type="discovery", title="用户登录失败",
                                   narrative="原因是缓存"),
            common_pb2.Observation(memory_session_id="m", project="p", type="discovery", title="缓存命中率",
                                   narrative="用户登录失败 after deploy"),
        ])).ids
        summary = s.add_summaries(store_pb2.AddSummariesRequest(summaries=[common_pb2.Summary(
            memory_session_id="m", project="p", request="Tune the quartz pool", learned="zircon limits")])).ids[0]
        yield s, dict(zip(("bazooka", "quartz", "gate", "cjk_title", "cjk_narrative"), ids, strict=True)), summary


def _search(store: Store, text: str, operators: bool = True, **filters: list[int]) -> store_pb2.StoreSearchResponse:
    syntax = store_pb2.QUERY_SYNTAX_OPERATORS if operators else store_pb2.QUERY_SYNTAX_PLAIN
    return store.search(store_pb2.StoreSearchRequest(query=text, syntax=syntax,
                                                     filters=common_pb2.Filters(**filters)))


def test_title_filter_matches_only_titles(columns_store):
    store, ids, summary = columns_store
    kinds = [common_pb2.DOC_KIND_OBSERVATION]
    assert _words(_search(store, "quartz", kinds=kinds)) == {ids["bazooka"], ids["quartz"]}
    assert _words(_search(store, "title:quartz", kinds=kinds)) == {ids["quartz"]}
    assert _words(_search(store, 'title:"quartz scheduler"', kinds=kinds)) == {ids["quartz"]}
    assert _words(_search(store, "title:quar*", kinds=kinds)) == {ids["quartz"]}
    assert _words(_search(store, "quartz -title:quartz", kinds=kinds)) == {ids["bazooka"]}
    assert _words(_search(store, "narrative:quartz", kinds=kinds)) == {ids["bazooka"]}
    # A session summary's title is its request; a word only in `learned` is not in its title.
    sessions = [common_pb2.DOC_KIND_SUMMARY]
    assert _words(_search(store, "title:quartz", kinds=sessions)) == {summary}
    assert _search(store, "title:zircon", kinds=sessions).total == 0
    assert _words(_search(store, "learned:zircon", kinds=sessions)) == {summary}
    # Typed without operators, `title:` is a word like any other: nothing is restricted.
    assert _words(_search(store, "title:quartz", operators=False, kinds=kinds)) == {ids["bazooka"], ids["quartz"]}


def test_title_filter_holds_on_the_cjk_substring_paths(columns_store):
    store, ids, _ = columns_store
    assert _words(_search(store, "用户登录失败")) == {ids["cjk_title"], ids["cjk_narrative"]}
    assert _words(_search(store, "title:用户登录失败")) == {ids["cjk_title"]}  # trigram path
    assert _words(_search(store, "title:缓存")) == {ids["cjk_narrative"]}  # LIKE path (2 characters)
    assert _words(_search(store, "缓存 -title:缓存")) == {ids["cjk_title"]}


def test_literal_operators_typed_in_plain_text_match_what_they_mean(columns_store):
    store, ids, _ = columns_store
    assert _search(store, "Baz", operators=False).total == 0
    assert _words(_search(store, "Baz*", operators=False)) == {ids["bazooka"]}
    assert _words(_search(store, "what is Baz*?", operators=False)) == {ids["bazooka"]}
    gate = _search(store, "OR gate", operators=False)
    assert gate.hits[0].ref.id == ids["gate"]
    assert _words(_search(store, "NOT", operators=False)) == {ids["gate"]}
    assert _search(store, "NOT", operators=True).total == 0  # with operators a lone NOT is syntax
    assert _words(_search(store, '"NOT"', operators=True)) == {ids["gate"]}  # quoted, it is text


@pytest.mark.parametrize("form", _OPERATOR_FORMS)
def test_every_operator_form_around_hostile_text_is_a_normal_search(store, form):
    fragments = [q for q in QUERIES if len(q) < 40 and _encodable(q)]
    for fragment in fragments:
        text = form.format(*([fragment] * form.count("{}")))
        for syntax in (store_pb2.QUERY_SYNTAX_PLAIN, store_pb2.QUERY_SYNTAX_OPERATORS):
            reply = store.search(store_pb2.StoreSearchRequest(query=text, syntax=syntax))
            assert reply.total >= len(reply.hits), text
            expression = to_fts5(parse(text, operators=syntax == store_pb2.QUERY_SYNTAX_OPERATORS)) or ""
            # Outside quoted tokens, the only syntax is the parser's own: OR, NOT, (), * and known columns.
            syntax_left = _QUOTED.sub(" ", expression)
            assert set(_COLUMN_FILTER.findall(syntax_left)) <= COLUMNS, (text, expression)
            assert set(_COLUMN_FILTER.sub(" ", syntax_left).replace("(", " ").replace(")", " ").split()) <= \
                {"OR", "NOT", "*"}, (text, expression)
    assert store.stats(store_pb2.StatsRequest()).observations >= 2
